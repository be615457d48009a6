// What the fs-search tool modules share: the typebox schema of a tool's plain-data parameters, the run
// config grep and glob take from their settings, and the small pieces of Pi's result and render API.
// No index.ts here: Pi loads only the entries package.json names (extensions/fs-search.ts).
import type { AgentToolResult } from "@mariozechner/pi-coding-agent";
import { keyHint } from "@mariozechner/pi-coding-agent";
import { StringEnum } from "@mariozechner/pi-ai";
import { Text, type Component } from "@mariozechner/pi-tui";
import { Type, type TSchema, type TUnsafe } from "typebox";
import type { ParameterSpecs } from "../lib/search/toolkit.mjs";
import { CutLines } from "../tui/cut-lines.ts";
import type { SearchBackend } from "../lib/search/rg/index.mjs";
import type { PiUtilsSettings } from "../lib/settings.ts";
import type { SessionFamiliarity } from "./familiarity.ts";

/** What grep and glob run with: the settings of the moment (session_start reloads them) and the backend. */
export interface SearchDeps {
	settings: () => PiUtilsSettings;
	backend: () => SearchBackend;
	/** What the model already has, from the session (absent: every answer in full). */
	familiarity?: SessionFamiliarity;
}

export const secs = (ms: number) => `${Math.round(ms / 100) / 10}s`;

/**
 * A tool's plain-data parameters as the typebox schema Pi validates calls against. The specs carry no static
 * type, so the caller names it (`P`, the tool module's params interface); Pi validates every call at run time.
 */
export function schemaOf<P>(specs: ParameterSpecs): TUnsafe<P> {
	const props: Record<string, TSchema> = {};
	for (const [name, spec] of Object.entries(specs)) {
		const opts = { description: spec.description };
		const schema = spec.enum
			? StringEnum(spec.enum, opts)
			: spec.type === "string"
				? Type.String(opts)
				: spec.type === "number"
					? Type.Number(opts)
					: Type.Boolean(opts);
		props[name] = spec.optional ? Type.Optional(schema) : schema;
	}
	return Type.Object(props) as unknown as TUnsafe<P>;
}

/** The part of a run config that grep and glob both take from their settings section and the call. */
export function searchConfig(s: PiUtilsSettings["grep"] | PiUtilsSettings["glob"], index: PiUtilsSettings["index"], cwd: string, signal: AbortSignal | undefined) {
	return { cwd, timeoutMs: s.timeoutMs, graceMs: s.graceMs, noIgnore: s.noIgnore, defaultLimit: s.limit, index: index.enabled, signal };
}

/** A tool runner's `{ text, details }` as Pi's tool result. */
export function toolResult<D>(result: { text: string; details: D }): AgentToolResult<D> {
	return { content: [{ type: "text", text: result.text }], details: result.details };
}

/** Renders through the tool's last component, as Pi's built-in renderers do. */
export function textComponent(last: unknown, text: string): Text {
	const component = (last as Text | undefined) ?? new Text("", 0, 0);
	component.setText(text);
	return component;
}

/** Lines drawn one screen line each, cut with an ellipsis at the width (a collapsed result never wraps). */
/**
 * A result as drawn: expanded, Pi's wrapping Text (everything readable); collapsed, each line cut to the
 * width, so a long hit line or path never spills onto a second screen line at 80 columns (issue 47).
 */
export function resultComponent(last: unknown, text: string, expanded: boolean): Component {
	if (expanded) return textComponent(last instanceof Text ? last : undefined, text);
	const component = last instanceof CutLines ? last : new CutLines();
	component.setLines(text.split("\n"));
	return component;
}

export const expandHint = () => keyHint("app.tools.expand", "to expand");
