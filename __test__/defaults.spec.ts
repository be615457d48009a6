// The JS defaults against the core's: every default extensions/lib/defaults.mjs states that the native core
// also owns must be the core's (coreDefaults()), so a change on either side fails here instead of drifting.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CORE_OWNED, DEFAULTS, FALLBACK_DEFAULTS, withCoreDefaults } from "../extensions/lib/defaults.mjs";
import { native } from "./helpers/native.ts";

/** Core defaults the JS side does not state, and why. */
const NOT_RESTATED: Record<string, string> = {
  "grep.threads": "the JS side never sets threads",
  "glob.threads": "the JS side never sets threads",
  "outline.maxFileBytes": "the JS side never sets it",
};
/** JS defaults named like a core default that are deliberately not the core's. */
const OWN_VALUE: Record<string, string> = {
  "outline.maxItems": "the outline tool's budget (200) is its own, below what a library call without maxItems gets",
};

function leaves(o: object, prefix = ""): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [k, v] of Object.entries(o)) {
    if (v && typeof v === "object") for (const [p, leaf] of leaves(v, `${prefix}${k}.`)) out.set(p, leaf);
    else out.set(`${prefix}${k}`, v);
  }
  return out;
}

const core = leaves(native.coreDefaults());
const mine = leaves(FALLBACK_DEFAULTS);

test("every default the core also owns is the core's value", () => {
  assert.ok(CORE_OWNED.length >= 11);
  for (const [js, theirs] of CORE_OWNED) {
    assert.ok(mine.has(js), `${js} is a JS default`);
    assert.ok(core.has(theirs), `${theirs} is in coreDefaults()`);
    assert.equal(mine.get(js), core.get(theirs), `defaults.mjs ${js} against coreDefaults().${theirs}`);
  }
});

test("every core default is either restated in CORE_OWNED or listed as one the JS side does not state", () => {
  const paired = new Set(CORE_OWNED.map(([, theirs]) => theirs));
  for (const path of core.keys()) {
    assert.ok(paired.has(path) || path in NOT_RESTATED || path in OWN_VALUE, `coreDefaults().${path} has no JS counterpart in CORE_OWNED`);
    assert.ok(!(paired.has(path) && path in NOT_RESTATED), `${path} is both paired and listed as not restated`);
  }
});

test("a JS default named like a core default is paired with it", () => {
  const paired = new Set(CORE_OWNED.map(([js]) => js));
  for (const path of mine.keys()) {
    if (!core.has(path)) continue;
    assert.ok(paired.has(path) || path in OWN_VALUE, `defaults.mjs ${path} restates coreDefaults().${path} without a CORE_OWNED entry`);
  }
  assert.notEqual(mine.get("outline.maxItems"), core.get("outline.maxItems"), "outline.maxItems now equals the core's: pair it instead");
});

test("with the addon loaded, DEFAULTS are the core's values, which are the literals", () => {
  assert.deepEqual(DEFAULTS, FALLBACK_DEFAULTS);
  assert.deepEqual(DEFAULTS, withCoreDefaults(FALLBACK_DEFAULTS, native.coreDefaults()));
  assert.ok(Object.isFrozen(DEFAULTS.index));
});

test("withCoreDefaults takes what the core gives, keeps the fallback for what it does not", () => {
  const fake = {
    grep: { noIgnore: false, hidden: false, maxLineLength: 77 },
    glob: { limit: "300" }, // wrong type (a future or broken binary): ignored
    locate: { limit: 12 },
    index: { minFiles: 5, maxDiskMb: 99 },
  };
  const d = withCoreDefaults(FALLBACK_DEFAULTS, fake);
  assert.equal(d.grep.noIgnore, false);
  assert.equal(d.grep.maxLineLength, 77);
  assert.equal(d.glob.limit, FALLBACK_DEFAULTS.glob.limit);
  assert.equal(d.glob.noIgnore, FALLBACK_DEFAULTS.glob.noIgnore);
  assert.equal(d.locate.limit, 12);
  assert.equal(d.trace.maxFiles, FALLBACK_DEFAULTS.trace.maxFiles);
  assert.equal(d.index.minFiles, 5);
  assert.equal(d.index.maxDiskMB, 99);
  // walk.hidden is paired with grep.hidden and glob.hidden; this core gives only the first.
  assert.equal(d.walk.hidden, false);
  assert.deepEqual(withCoreDefaults(FALLBACK_DEFAULTS, undefined), FALLBACK_DEFAULTS);
  // Settings files are scaffolded from these objects: the key order is the literal's.
  assert.equal(JSON.stringify(Object.keys(d.grep)), JSON.stringify(Object.keys(FALLBACK_DEFAULTS.grep)));
  assert.ok(Object.isFrozen(d.grep));
});
