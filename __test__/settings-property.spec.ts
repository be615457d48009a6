import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { DEFAULT_SETTINGS, KNOWN_TOOLS, loadSettings, type PiUtilsSettings } from "../extensions/lib/settings.ts";

type Section = "grep" | "glob" | "locate" | "trace" | "shell";
const SECTIONS: Section[] = ["grep", "glob", "locate", "trace", "shell"];
const MAX_MS = 2 ** 31 - 1;

// Written independently of the loader's schema so a loosened check there shows up here.
const VALID: Record<Section, Record<string, (v: unknown) => boolean>> = (() => {
	const int = (min: number, max: number) => (v: unknown) => Number.isInteger(v) && (v as number) >= min && (v as number) <= max;
	const bool = (v: unknown) => typeof v === "boolean";
	const big = Number.MAX_SAFE_INTEGER;
	return {
		grep: { timeoutMs: int(1, MAX_MS), graceMs: int(0, MAX_MS), noIgnore: bool, limit: int(1, big), maxLineLength: int(1, big), maxBytes: int(1, big) },
		glob: { timeoutMs: int(1, MAX_MS), graceMs: int(0, MAX_MS), limit: int(1, big), noIgnore: bool },
		locate: { timeoutMs: int(1, MAX_MS), graceMs: int(0, MAX_MS), limit: int(1, big) },
		trace: { timeoutMs: int(1, MAX_MS), graceMs: int(0, MAX_MS), maxFiles: int(1, big), maxRegions: int(1, big) },
		shell: {
			foregroundTimeoutSec: int(1, Math.floor(MAX_MS / 1000)), autoBackgroundAfterSec: int(1, Math.floor(MAX_MS / 1000)),
			maxBackgroundJobs: int(1, big), killGraceMs: int(0, MAX_MS), onQuit: (v) => v === "kill" || v === "keep",
			maxLogBytes: int(2 * 1024 * 1024, big), logRetentionDays: int(1, 36500),
		},
	};
})();

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

const validValue = (section: Section, key: string): fc.Arbitrary<unknown> => {
	const def = (DEFAULT_SETTINGS[section] as unknown as Record<string, unknown>)[key];
	if (typeof def === "boolean") return fc.boolean();
	if (typeof def === "string") return fc.constantFrom("kill", "keep");
	return fc.oneof(fc.integer({ min: 0, max: 100000 }), fc.constantFrom(1, MAX_MS, MAX_MS + 1));
};
const anyValue = fc.jsonValue({ maxDepth: 2 });
const wrongSection = fc.oneof(fc.integer(), fc.string({ maxLength: 5 }), fc.constant(null), fc.boolean(), fc.array(anyValue, { maxLength: 3 }));
const unknownEntries = fc.array(fc.tuple(fc.string({ maxLength: 8 }), anyValue), { maxLength: 3 });

function shuffled<T>(items: T[]): fc.Arbitrary<T[]> {
	return fc.shuffledSubarray(items, { minLength: items.length, maxLength: items.length });
}

const sectionArb = (section: Section): fc.Arbitrary<unknown> => {
	const keys = Object.keys(DEFAULT_SETTINGS[section]);
	const known = fc.tuple(...keys.map((k) => fc.option(fc.tuple(fc.constant(k), fc.oneof(validValue(section, k), anyValue)), { nil: undefined })));
	const object = fc.tuple(known, unknownEntries)
		.chain(([k, u]) => shuffled([...k.filter((e) => e !== undefined), ...u]))
		.map((entries) => Object.fromEntries(entries));
	return fc.oneof({ arbitrary: object, weight: 4 }, { arbitrary: wrongSection, weight: 1 });
};

const toolEntry = fc.oneof(fc.constantFrom(...KNOWN_TOOLS), fc.constantFrom("shell_*", "*", "g*", "*x", "a*b", "nope"), fc.string({ maxLength: 6 }), fc.integer());
const disabledArb = fc.oneof({ arbitrary: fc.array(toolEntry, { maxLength: 5 }), weight: 4 }, { arbitrary: wrongSection, weight: 1 });

const userFile = fc.record({
	sections: fc.tuple(...SECTIONS.map((s) => fc.option(sectionArb(s), { nil: undefined }))),
	disabled: fc.option(disabledArb, { nil: undefined }),
	unknown: unknownEntries,
	indent: fc.constantFrom<string | number>(0, 2, 4, "\t"),
	crlf: fc.boolean(),
	trailingNewline: fc.boolean(),
	readOnly: fc.boolean(),
}).chain((f) => {
	const entries: [string, unknown][] = [...f.unknown];
	SECTIONS.forEach((s, i) => { if (f.sections[i] !== undefined) entries.push([s, f.sections[i]]); });
	if (f.disabled !== undefined) entries.push(["disabledTools", f.disabled]);
	return shuffled(entries).map((ordered) => {
		let text = JSON.stringify(Object.fromEntries(ordered), null, f.indent);
		if (f.trailingNewline) text += "\n";
		if (f.crlf) text = text.replace(/\n/g, "\r\n");
		return { text, readOnly: f.readOnly };
	});
});

function isSubsequence(small: string, big: string): boolean {
	let j = 0;
	for (let i = 0; i < big.length && j < small.length; i++) if (big[i] === small[j]) j++;
	return j === small.length;
}

function assertStartsWithKeys(before: Record<string, unknown>, after: Record<string, unknown>, where: string) {
	const kb = Object.keys(before);
	assert.deepEqual(Object.keys(after).slice(0, kb.length), kb, `key order kept in ${where}`);
}

function assertValidAndHonoured(settings: PiUtilsSettings, user: Record<string, unknown>) {
	for (const section of SECTIONS) {
		const given = user[section];
		const got = settings[section] as unknown as Record<string, unknown>;
		assert.deepEqual(Object.keys(got).sort(), Object.keys(VALID[section]).sort(), `${section} complete`);
		for (const [key, ok] of Object.entries(VALID[section])) {
			assert.ok(ok(got[key]), `${section}.${key} valid: ${JSON.stringify(got[key])}`);
			const mine = isObject(given) && Object.hasOwn(given, key) ? given[key] : undefined;
			const expected = mine !== undefined && ok(mine) ? mine : (DEFAULT_SETTINGS[section] as unknown as Record<string, unknown>)[key];
			assert.deepEqual(got[key], expected, `${section}.${key} honours a valid user value, else default`);
		}
	}
	assert.ok(Array.isArray(settings.disabledTools));
	for (const name of settings.disabledTools) assert.ok(typeof name === "string" && !name.includes("*"), `expanded: ${name}`);
	assert.equal(new Set(settings.disabledTools).size, settings.disabledTools.length, "no duplicates");
}

test("property: loading never changes or removes a user's key or value, and always yields a complete valid config", () => {
	fc.assert(
		fc.property(userFile, ({ text, readOnly }) => {
			const dir = mkdtempSync(join(tmpdir(), "pi-utils-settings-prop-"));
			try {
				const file = join(dir, "pi-utils.json");
				writeFileSync(file, text);
				if (readOnly) chmodSync(file, 0o444);
				const before = JSON.parse(text) as Record<string, unknown>;

				const r = loadSettings(dir);
				const afterText = readFileSync(file, "utf8");
				const after = JSON.parse(afterText) as Record<string, unknown>;

				assertValidAndHonoured(r.settings, before);
				assert.ok(isSubsequence(text, afterText), "every original byte is kept, in order");
				assert.deepEqual(readdirSync(dir), ["pi-utils.json"], "no temp files left");

				assertStartsWithKeys(before, after, "the top level");
				for (const key of Object.keys(before)) {
					const b = before[key];
					if (isObject(b) && isObject(after[key])) {
						assertStartsWithKeys(b, after[key] as Record<string, unknown>, key);
						for (const k of Object.keys(b)) assert.deepEqual((after[key] as Record<string, unknown>)[k], b[k], `${key}.${k} unchanged`);
					} else {
						assert.deepEqual(after[key], b, `${key} unchanged`);
					}
				}

				if (readOnly) {
					assert.equal(afterText, text);
					assert.deepEqual(r.repaired, []);
				} else {
					for (const key of [...SECTIONS, "disabledTools"]) assert.ok(Object.hasOwn(after, key), `${key} added`);
					for (const s of SECTIONS) {
						if (!isObject(after[s])) continue;
						for (const k of Object.keys(DEFAULT_SETTINGS[s])) assert.ok(Object.hasOwn(after[s] as object, k), `${s}.${k} added`);
					}
					assert.equal(r.repaired.length > 0, afterText !== text, "repaired reports exactly when the file changed");
				}

				const again = loadSettings(dir);
				assert.deepEqual(again.repaired, [], "a second load has nothing to add");
				assert.equal(readFileSync(file, "utf8"), afterText);
				assert.deepEqual(again.settings, r.settings);
			} finally {
				rmSync(dir, { recursive: true, force: true });
			}
		}),
		{ numRuns: 200 },
	);
});
