// The familiarity picture: what the model has already seen of each file, whether it still has it (a compaction
// took it out of the context), and whether it is still true (the file on disk is what the model was shown).
// Built from the calls of the session's current branch (observe.mjs) and the disk facts taken when each result
// was shown (disk.mjs); emitted as the agentgrep harness context (`{version, known_files, known_regions,
// known_symbols, focus_files}`) that outline, trace and locate take, keyed by the path exactly as the tools
// display it. A change is decided by comparing facts (sizes, inodes, times, content hashes), never by trust:
// the model's own edit and write move what it knows forward; anything else that changed a file it saw is
// "changed since you read it at turn N".

import path from "node:path";
import { shownHash } from "./disk.mjs";
import { canonicalPath, itemsOfResult } from "./observe.mjs";

export const CONTEXT_VERSION = 1;
/** What the seed's consumers treat as high confidence, and what this picture gives a lowered fact. */
const HIGH = 1;
const OWN_EDIT = 0.6;
const CHANGED = 0.2;
const LOWERED = 0.4;
const LOWERED_PRUNE = 0.2;
/** At most this many regions go into one context (the latest). */
const MAX_REGIONS = 400;

const VERB = { read: "read", outline: "saw", trace: "saw", locate: "saw", grep: "saw", edit: "edited", write: "wrote" };
const SEEN = { read: "read", outline: "outlined", trace: "traced", locate: "located", grep: "grep hits shown", edit: "edited", write: "written" };

/**
 * The disk facts of one tool result's files, taken right after it was shown: `{ [path]: facts }` where facts
 * are `{ missing: true }` or `{ sig, size, hash, regions: { "s-e": hash } }`. A read's region hash is the hash
 * of the very text it showed, so a file that changed between the read and this capture is never recorded as
 * unchanged.
 * @param {ReturnType<typeof itemsOfResult>} items
 * @param {{ facts(file: string | Buffer): any }} disk
 * @param {(item: { path: string, pathBytes?: string }) => string | Buffer} absOf
 */
export function captureItems(items, disk, absOf) {
  /** @type {Record<string, any>} */
  const out = {};
  for (const item of items) {
    const f = disk.facts(absOf(item));
    if (f.missing) {
      out[item.path] = { missing: true };
      continue;
    }
    const regions = { ...(out[item.path]?.regions ?? {}) };
    for (const r of item.regions) {
      const key = `${r.start}-${r.end}`;
      if (typeof r.text === "string") regions[key] = shownHash(r.text);
      else if (f.regionHash) regions[key] = f.regionHash(r.start, r.end);
    }
    out[item.path] = { sig: f.sig, size: f.size, hash: f.hash, regions };
  }
  return out;
}

/** Facts of a file before the model's edit or write touches it (`tool_call`), to tell an outside change from its own. */
export function captureBefore(disk, abs) {
  const f = disk.facts(abs);
  return f.missing ? { missing: true } : { sig: f.sig, size: f.size, hash: f.hash };
}

/** Whether two fact sets describe the same content: by hash when both have one, else by the stat facts. */
function same(a, b) {
  if (!a || !b) return false;
  if (a.missing || b.missing) return a.missing === true && b.missing === true;
  if (a.hash && b.hash) return a.hash === b.hash;
  return a.sig === b.sig;
}

const clamp = (n) => Math.round(n * 100) / 100;

/**
 * Builds the picture from the branch's calls (`callsOfBranch(...).calls`) and the captures recorded for them
 * (`captures.get(toolCallId)` → `{ after, before? }`; a call without one is unverified: never presented as
 * unchanged). `disk.facts` gives each file's facts now.
 * @param {Array<{ toolCallId: string, toolName: string, turn: number, lowered: boolean, input: any, content: any, details: any, isError: boolean }>} calls
 * @param {{ get(id: string): { after?: Record<string, any>, before?: any } | undefined }} captures
 * @param {{ facts(file: string | Buffer): any }} disk
 * @param {{ cwd: string, home?: string, isFile?: (abs: string) => boolean }} env
 */
export function buildFamiliarity(calls, captures, disk, env) {
  /** @type {Map<string, { path: string, pathBytes?: string, events: any[] }>} */
  const files = new Map();
  for (const call of calls) {
    const items = itemsOfResult(call, env);
    const cap = captures.get(call.toolCallId);
    for (const item of items) {
      let f = files.get(item.path);
      if (!f) files.set(item.path, (f = { path: item.path, events: [] }));
      if (item.pathBytes) f.pathBytes = item.pathBytes;
      f.events.push({
        ...item,
        turn: call.turn,
        lowered: call.lowered,
        after: cap?.after?.[item.path] ?? null,
        before: item.kind === "edit" || item.kind === "write" ? (cap?.before ?? null) : null,
      });
    }
  }
  const absOf = (f) => absolutePath(env.cwd, f);
  /** @type {Map<string, FileView>} */
  const views = new Map();
  for (const f of files.values()) views.set(f.path, viewOf(f, disk.facts(absOf(f))));
  return new Familiarity(views, env);
}

/** The path to stat for a display path (the raw bytes when the name is not UTF-8). */
export function absolutePath(cwd, f) {
  if (f.pathBytes) return Buffer.concat([Buffer.from(cwd + path.sep), Buffer.from(f.pathBytes, "hex")]);
  return path.resolve(cwd, f.path);
}

/**
 * @typedef {{ path: string, reason: string | null, missing: boolean, file: any, regions: any[], symbols: any[], focus: boolean,
 *   structureKnown: boolean }} FileView
 */

function viewOf(f, now) {
  const ev = f.events;
  // Outside changes: between two captures the content moved without the model's edit or write, or it moved
  // after the last capture. `outsideAfter[i]`: such a change happened after event i.
  const detections = [];
  let prev = -1;
  for (let i = 0; i < ev.length; i++) {
    const e = ev[i];
    if (!e.after) continue;
    const arriving = e.kind === "edit" || e.kind === "write" ? e.before : e.after;
    if (prev >= 0 && arriving && !same(ev[prev].after, arriving)) detections.push(prev);
    prev = i;
  }
  if (prev >= 0 && !same(ev[prev].after, now)) detections.push(prev);
  const outsideAfter = (i) => detections.some((j) => j >= i);
  const latest = (pred) => {
    for (let i = ev.length - 1; i >= 0; i--) if (pred(ev[i])) return i;
    return -1;
  };
  const said = (e, what = "it") => `${VERB[e.kind] === "saw" ? "saw" : VERB[e.kind]} ${what} at turn ${e.turn}`;

  // The file-level freshness: against the last read, outline, edit or write (or, for a file only seen in
  // grep/trace/locate, its last sighting).
  let baseI = latest((e) => e.after && ["read", "outline", "edit", "write"].includes(e.kind));
  if (baseI < 0) baseI = latest((e) => e.after);
  let reason = null;
  if (baseI >= 0 && outsideAfter(baseI)) {
    reason = `changed since you ${said(ev[baseI])}${now.missing ? " (the file is gone)" : ""}`;
  }

  const structI = latest((e) => (e.kind === "outline" && e.structure) || (e.kind === "read" && e.full) || e.kind === "write");
  const fullI = latest((e) => (e.kind === "read" && e.full) || e.kind === "write");
  const symbolsSeen = ev.some((e) => e.symbols && e.symbols.length > 0);
  const currentOf = (i, what) => {
    // How current what event i showed is now: the same content, moved on only by the model itself, or changed.
    const e = ev[i];
    if (!e.after) return { c: OWN_EDIT, why: `not verified (seen at turn ${e.turn}, before this process kept facts)` };
    if (same(e.after, now)) return { c: HIGH, why: null };
    if (outsideAfter(i)) return { c: CHANGED, why: `changed since you ${said(e, what)}` };
    return { c: OWN_EDIT, why: `edited by you since turn ${e.turn}` };
  };
  const fileReasons = [];
  // The file entry's currency is its structure's (the latest outline, whole read or write); a whole read that
  // is out of date gives no body claim at all (its regions say what changed), rather than making a structure
  // seen since look stale.
  let current = HIGH;
  if (structI >= 0) {
    const { c, why } = currentOf(structI, "it");
    current = c;
    if (why) fileReasons.push(why);
  }
  const bodyCurrent = fullI >= 0 && currentOf(fullI, "it").c >= HIGH;
  if (fullI >= 0 && !bodyCurrent) fileReasons.push(`the whole file read at turn ${ev[fullI].turn} is out of date`);
  if (reason) {
    // One change note is enough: the latest thing the model did with the file, then everything else.
    current = Math.min(current, CHANGED);
    for (let i = fileReasons.length - 1; i >= 0; i--) if (fileReasons[i].startsWith("changed")) fileReasons.splice(i, 1);
    fileReasons.unshift(reason);
  }
  if (now.missing) current = 0;
  const structure = structI >= 0 ? (ev[structI].lowered ? LOWERED : HIGH) : symbolsSeen ? 0.5 : 0;
  const body = bodyCurrent ? (ev[fullI].lowered ? LOWERED : HIGH) : 0;
  const lowered = (structI < 0 || ev[structI].lowered) && (fullI < 0 || ev[fullI].lowered);
  const seenWhy = [];
  if (bodyCurrent) seenWhy.push(`${ev[fullI].kind === "write" ? "written" : "read in full"} at turn ${ev[fullI].turn}`);
  if (structI >= 0 && structI !== fullI) seenWhy.push(`${SEEN[ev[structI].kind]} at turn ${ev[structI].turn}`);
  if (lowered && (structI >= 0 || fullI >= 0)) seenWhy.push("before a compaction");
  const file = {
    structure_confidence: structure,
    body_confidence: body,
    current_version_confidence: clamp(current),
    prune_confidence: lowered ? LOWERED_PRUNE : HIGH,
    source_strength: bodyCurrent ? "full_file" : structI >= 0 ? "outline_only" : "snippet",
    reasons: [...fileReasons, ...seenWhy],
  };
  const lastCap = latest((e) => e.after && !e.after.missing);
  if (lastCap >= 0 && !now.missing && same(ev[lastCap].after, now)) file.size = ev[lastCap].after.size;

  // Regions, newest sighting of a range wins.
  /** @type {Map<string, any>} */
  const byRange = new Map();
  for (let i = 0; i < ev.length; i++) {
    const e = ev[i];
    for (const r of e.regions ?? []) {
      const key = `${r.start}-${r.end}`;
      let cur;
      const h = e.after?.regions?.[key];
      if (!e.after) cur = { c: OWN_EDIT, why: `not verified (seen at turn ${e.turn})` };
      else if (now.missing) cur = { c: 0, why: `changed since you ${said(e)} (the file is gone)` };
      else if (h && now.regionHash ? now.regionHash(r.start, r.end) === h : same(e.after, now)) cur = { c: HIGH, why: null };
      else if (outsideAfter(i)) cur = { c: CHANGED, why: `changed since you ${said(e)}` };
      else cur = { c: OWN_EDIT, why: `edited by you since turn ${e.turn}` };
      const bodyConf = r.strength === "full_region" ? HIGH : r.strength === "snippet" ? 0.6 : 0.5;
      // An older sighting of overlapping lines stands only if the file was the same then: otherwise the model
      // has since been shown other text at those lines, and what it saw first is no longer what it believes.
      for (const [k, o] of byRange) {
        if (o.start_line <= r.end && r.start <= o.end_line && !(o.at.after && e.after && same(o.at.after, e.after))) byRange.delete(k);
      }
      byRange.delete(key);
      byRange.set(key, {
        start_line: r.start,
        end_line: r.end,
        structure_confidence: 0,
        body_confidence: e.lowered ? Math.min(bodyConf, LOWERED) : bodyConf,
        current_version_confidence: cur.c,
        prune_confidence: e.lowered ? LOWERED_PRUNE : HIGH,
        source_strength: r.strength,
        reasons: [...(cur.why ? [cur.why] : []), `${SEEN[e.kind]} at turn ${e.turn}${e.lowered ? ", before a compaction" : ""}`],
        at: e,
      });
    }
  }
  const regions = mergeRegions([...byRange.values()].map(({ at: _at, ...r }) => r));

  // Symbols: the newest sighting of each kind+name.
  /** @type {Map<string, any>} */
  const bySymbol = new Map();
  for (let i = 0; i < ev.length; i++) {
    const e = ev[i];
    for (const s of e.symbols ?? []) {
      const key = `${s.kind}\0${s.name}`;
      const cur = currentOf(i, "it");
      bySymbol.delete(key);
      bySymbol.set(key, {
        symbol: s.name,
        kind: s.kind,
        start_line: s.start,
        end_line: s.end,
        structure_confidence: e.lowered ? LOWERED : HIGH,
        body_confidence: 0,
        current_version_confidence: cur.c,
        prune_confidence: e.lowered ? LOWERED_PRUNE : HIGH,
        source_strength: "outline_only",
        reasons: [...(cur.why ? [cur.why] : []), `${SEEN[e.kind]} at turn ${e.turn}${e.lowered ? ", before a compaction" : ""}`],
      });
    }
  }
  const structureKnown = structure >= HIGH && current >= HIGH && file.prune_confidence >= HIGH && !now.missing;
  return {
    path: f.path,
    ...(f.pathBytes ? { pathBytes: f.pathBytes } : {}),
    reason,
    missing: now.missing === true,
    file,
    regions,
    // When the model's hold on the whole structure comes from a full read or write (the latest such event is
    // not an outline listing it whole), the symbols other answers happened to list are not the file's list:
    // the core would take every symbol missing from them for one added since. None are sent then.
    symbols: structI >= 0 && ev[structI].kind !== "outline" ? [] : [...bySymbol.values()],
    focus: ev.some((e) => (e.kind === "edit" || e.kind === "write") && !e.lowered),
    structureKnown,
    structureTurn: structI >= 0 ? ev[structI].turn : null,
  };
}

/** Unchanged full regions that touch or overlap are one known region (a consumer needs one that covers a range). */
function mergeRegions(regions) {
  const mergeable = (r) => r.current_version_confidence >= HIGH && r.source_strength === "full_region" && r.prune_confidence >= HIGH;
  const out = regions.filter((r) => !mergeable(r));
  const full = regions.filter(mergeable).sort((a, b) => a.start_line - b.start_line || a.end_line - b.end_line);
  for (const r of full) {
    const last = out.length > 0 ? out[out.length - 1] : null;
    if (last && mergeable(last) && r.start_line <= last.end_line + 1) {
      if (r.end_line > last.end_line) last.end_line = r.end_line;
      for (const why of r.reasons) if (!last.reasons.includes(why)) last.reasons.push(why);
    } else out.push({ ...r, reasons: [...r.reasons] });
  }
  return out;
}

export class Familiarity {
  /** @param {Map<string, FileView>} views @param {{ cwd: string }} env */
  constructor(views, env) {
    this.views = views;
    this.cwd = env.cwd;
  }

  /** Every file the model was shown, by canonical (cwd-relative) display path. */
  get paths() {
    return [...this.views.keys()];
  }

  /** The file's view, or undefined when the model was never shown it. */
  view(p) {
    return this.views.get(p);
  }

  /** "changed since you read it at turn N" when the file changed on disk by anything but the model since. */
  changedNote(p) {
    return this.views.get(p)?.reason ?? null;
  }

  /** The top-level symbols the model has, unchanged, as `kind name @ start-end` labels (for grep's hints). */
  knownSymbolLabels(p) {
    const v = this.views.get(p);
    if (!v) return new Set();
    return new Set(
      v.symbols
        .filter((s) => s.structure_confidence >= HIGH && s.current_version_confidence >= HIGH && s.prune_confidence >= HIGH)
        .map((s) => `${s.kind} ${s.symbol} @ ${s.start_line}-${s.end_line}`),
    );
  }

  /**
   * The harness context for one call. `root` (absolute) re-keys paths relative to a trace/locate search
   * directory (files outside it are left out); `only` + `as` give one file's entries under the key a call
   * displays it by (outline keys by its path argument as given).
   * @param {{ root?: string, only?: string, as?: string }} [scope]
   */
  toContext(scope = {}) {
    /** @type {import("./familiarity.d.mts").HarnessContext} */
    const ctx = { version: CONTEXT_VERSION, known_files: [], known_regions: [], known_symbols: [], focus_files: [] };
    for (const v of this.views.values()) {
      let key = v.path;
      if (scope.only !== undefined) {
        if (v.path !== scope.only) continue;
        key = scope.as ?? v.path;
      } else if (scope.root && path.resolve(scope.root) !== path.resolve(this.cwd)) {
        const rel = path.relative(scope.root, path.resolve(this.cwd, v.path));
        if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel)) continue;
        key = rel.split(path.sep).join("/");
      }
      ctx.known_files.push({ path: key, ...v.file });
      for (const r of v.regions) ctx.known_regions.push({ path: key, ...r });
      for (const s of v.symbols) ctx.known_symbols.push({ path: key, ...s });
      if (v.focus) ctx.focus_files.push(key);
    }
    if (ctx.known_regions.length > MAX_REGIONS) ctx.known_regions = ctx.known_regions.slice(-MAX_REGIONS);
    return ctx;
  }
}

/**
 * What the extension keeps between a tool's result and the next call: the disk facts of each result's files,
 * taken when the result is shown (`tool_result`), and of a file before the model's own edit or write
 * (`tool_call`). Keyed by tool call id, so a branch rebuilt later (compaction, /tree, a fork) finds the facts
 * of exactly its own calls; a call with none (the process restarted) is unverified.
 * @param {{ facts(file: string | Buffer): any }} disk
 */
export function createCaptureStore(disk, limit = 20_000) {
  /** @type {Map<string, { after?: Record<string, any>, before?: any }>} */
  const store = new Map();
  const entry = (id) => {
    let e = store.get(id);
    if (!e) {
      const oldest = store.keys().next().value;
      if (store.size >= limit && oldest !== undefined) store.delete(oldest);
      store.set(id, (e = {}));
    }
    return e;
  };
  return {
    get: (id) => store.get(id),
    /** Before a tool runs: an edit or write's target as it is now. */
    beforeCall(id, toolName, input, env) {
      if (toolName !== "edit" && toolName !== "write") return;
      const items = itemsOfResult({ toolName, input, content: [], details: undefined, isError: false }, env);
      if (items.length === 0) return;
      entry(id).before = captureBefore(disk, absolutePath(env.cwd, items[0]));
    },
    /** After a tool ran, as its result is shown: every file it showed. */
    afterResult(id, result, env) {
      const items = itemsOfResult(result, env);
      if (items.length === 0) return;
      entry(id).after = captureItems(items, disk, (item) => absolutePath(env.cwd, item));
    },
    get size() {
      return store.size;
    },
  };
}

/**
 * The picture as each search tool takes it, by the paths that tool displays: outline by its path argument,
 * locate and trace relative to their search directory, grep relative to its searched path (a single-file
 * search prints the file's base name). A null picture (nothing seen yet, or no session) gives no context, but
 * locate and trace still record what they show.
 * @param {Familiarity | null} picture
 * @param {{ cwd: string, isFile?: (abs: string) => boolean }} env
 */
export function toolViews(picture, env) {
  const { cwd } = env;
  const nonEmpty = (c) => (c.known_files.length > 0 ? c : undefined);
  return {
    outline(arg) {
      if (!picture) return null;
      const canon = canonicalPath(cwd, arg);
      if (!picture.view(canon)) return null;
      return { context: nonEmpty(picture.toContext({ only: canon, as: arg })), changed: picture.changedNote(canon) };
    },
    discover(root) {
      if (!picture) return {};
      const abs = path.resolve(cwd, root);
      return {
        context: nonEmpty(picture.toContext({ root: abs })),
        changed: (shown) => picture.changedNote(canonicalPath(cwd, path.join(abs, shown))),
      };
    },
    grep(root) {
      if (!picture) return undefined;
      const base = path.resolve(cwd, root ?? ".");
      const single = root !== undefined && env.isFile?.(base) === true;
      const canon = (shown) => canonicalPath(cwd, single && shown === path.basename(base) ? base : path.join(base, shown));
      return {
        symbols: (shown) => picture.knownSymbolLabels(canon(shown)),
        structure: (shown) => picture.view(canon(shown))?.structureKnown === true,
        changed: (shown) => picture.changedNote(canon(shown)),
      };
    },
  };
}
