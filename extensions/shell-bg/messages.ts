// The chat messages shell-bg adds: follow-ups about jobs (told to the model) and /shell-bg's listings
// (shown to the user only).
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { keyHint } from "@mariozechner/pi-coding-agent";
import { Box, Text } from "@mariozechner/pi-tui";
import { followUpPreview } from "../lib/shell/format.ts";
import { previewView, rowsOf, tableView } from "./view.ts";

export const MESSAGE_TYPE = "shell-bg";
export const LISTING_TYPE = "shell-bg-listing";

type Content = string | readonly { type: string; text?: string }[];
const textOf = (content: Content) => (typeof content === "string" ? content : content.map((c) => (c.type === "text" ? (c.text ?? "") : "")).join(""));

export function registerMessages(pi: ExtensionAPI): void {
	// Follow-ups: collapsed, the status, the command and the newest output lines, each cut to one screen line;
	// expanded, all of it (the model gets all of it either way).
	pi.registerMessageRenderer(MESSAGE_TYPE, (message, { expanded }) => {
		const text = textOf(message.content);
		return expanded ? new Text(text, 1, 0) : previewView(followUpPreview(text, keyHint("app.tools.expand", "to expand")), undefined, 1);
	});

	// /shell-bg's listings: a message in the chat (it stays where the user asked for it; a notice is replaced
	// by the next one), drawn as written, and never shown to the model.
	pi.registerMessageRenderer(LISTING_TYPE, (message, _options, theme) => {
		const title = (message.details as { title?: string } | undefined)?.title ?? "/shell-bg";
		const box = new Box(1, 1, (t) => theme.bg("customMessageBg", t));
		box.addChild(new Text(theme.fg("customMessageLabel", theme.bold(title)), 0, 0));
		// A job table is laid out at the box's width; other listings (logs) are drawn as written.
		const rows = rowsOf(message.details);
		const text = (t: string) => theme.fg("customMessageText", t);
		box.addChild(rows ? tableView(rows, text) : new Text(text(textOf(message.content)), 0, 0));
		return box;
	});
	pi.on("context", (event) => {
		const kept = event.messages.filter((m) => !(m.role === "custom" && m.customType === LISTING_TYPE));
		return kept.length === event.messages.length ? undefined : { messages: kept };
	});
}
