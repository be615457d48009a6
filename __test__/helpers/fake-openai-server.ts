// A scripted OpenAI-compatible chat-completions server on 127.0.0.1 for running the real Pi CLI offline
// (Pi reads its models.json, pointed here). Each request gets the next scripted step, streamed as SSE; every request body is kept so a
// test can assert what the model saw (tools offered, tool results returned).
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ScriptedToolCall {
	name: string;
	arguments: Record<string, unknown>;
	id?: string;
}

export interface ScriptedReply {
	text?: string;
	toolCalls?: ScriptedToolCall[];
}

/** What Pi sends; only the fields tests look at are typed. */
export interface ChatRequest {
	model: string;
	messages: Array<{ role: string; content?: unknown; tool_call_id?: string; tool_calls?: unknown }>;
	tools?: Array<{ type: "function"; function: { name: string; description: string; parameters: unknown } }>;
	[key: string]: unknown;
}

/** A fixed reply, or one computed from the request (e.g. to echo a tool result back). */
export type ScriptStep = ScriptedReply | ((request: ChatRequest, index: number) => ScriptedReply);

export interface FakeOpenAIServer {
	/** For models.json `baseUrl`, e.g. `http://127.0.0.1:40123/v1`. */
	baseUrl: string;
	requests: ChatRequest[];
	close(): Promise<void>;
}

const EXHAUSTED: ScriptedReply = { text: "(fake server: script exhausted)" };

function chunk(model: string, body: Record<string, unknown>): string {
	return `data: ${JSON.stringify({ id: "chatcmpl-fake", object: "chat.completion.chunk", created: 0, model, ...body })}\n\n`;
}

function sse(model: string, reply: ScriptedReply, index: number): string {
	const delta = (d: Record<string, unknown>, finish: string | null = null) =>
		chunk(model, { choices: [{ index: 0, delta: d, finish_reason: finish }] });
	let out = delta({ role: "assistant", content: "" });
	if (reply.text) out += delta({ content: reply.text });
	const calls = reply.toolCalls ?? [];
	calls.forEach((call, i) => {
		const id = call.id ?? `call_${index}_${i}`;
		out += delta({ tool_calls: [{ index: i, id, type: "function", function: { name: call.name, arguments: "" } }] });
		out += delta({ tool_calls: [{ index: i, function: { arguments: JSON.stringify(call.arguments) } }] });
	});
	out += delta({}, calls.length ? "tool_calls" : "stop");
	out += chunk(model, { choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } });
	return `${out}data: [DONE]\n\n`;
}

export async function startFakeOpenAIServer(steps: ScriptStep[]): Promise<FakeOpenAIServer> {
	const requests: ChatRequest[] = [];
	const server = http.createServer((req, res) => {
		const parts: Buffer[] = [];
		req.on("data", (d: Buffer) => parts.push(d));
		req.on("end", () => {
			if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
				res.writeHead(404, { "content-type": "application/json" });
				res.end(JSON.stringify({ error: { message: `fake server: no route ${req.method} ${req.url}` } }));
				return;
			}
			let body: ChatRequest;
			try {
				body = JSON.parse(Buffer.concat(parts).toString("utf8")) as ChatRequest;
			} catch {
				res.writeHead(400).end();
				return;
			}
			const index = requests.length;
			requests.push(body);
			const step = steps[index];
			let reply: ScriptedReply;
			try {
				reply = step === undefined ? EXHAUSTED : typeof step === "function" ? step(body, index) : step;
			} catch (e) {
				reply = { text: `(fake server: step ${index} threw: ${(e as Error).message})` };
			}
			res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "close" });
			res.end(sse(body.model, reply, index));
		});
	});
	await new Promise<void>((resolve, reject) => {
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => resolve());
	});
	const { port } = server.address() as AddressInfo;
	return {
		baseUrl: `http://127.0.0.1:${port}/v1`,
		requests,
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}

/** The tool names offered to the model in one request. */
export function offeredTools(request: ChatRequest): string[] {
	return (request.tools ?? []).map((t) => t.function.name);
}

/** The text of every `role: "tool"` message in a request, keyed by tool_call_id. */
export function toolResults(request: ChatRequest): Map<string, string> {
	const out = new Map<string, string>();
	for (const m of request.messages) {
		if (m.role !== "tool" || !m.tool_call_id) continue;
		const content = m.content;
		const text = typeof content === "string"
			? content
			: Array.isArray(content)
				? content.map((c: { text?: string }) => c.text ?? "").join("")
				: "";
		out.set(m.tool_call_id, text);
	}
	return out;
}
