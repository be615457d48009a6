// Issue 45's "no why line false" and "no definition shown as a call site", checked on every answer of the
// evaluation (the unit tests check them on fixtures only): each reason locate gives is held to the file's path,
// text and outline; each call-site region trace shows must hold a call of the subject itself (not `__subject`,
// not `subject_locked`, not the subject's own definition line).
import fs from "node:fs";
import path from "node:path";

/**
 * Lower-case tokens as the discovery splits them: at non-alphanumerics, lower→upper, digit↔letter, and before the
 * last capital of a run followed by a lower-case letter (`HTTPServer`), unless that letter is a plural `s` or comes
 * before a digit (`URLs`, `IPv6`).
 */
export function tokens(text) {
  return text
    .split(/[^\p{L}\p{N}]+/u)
    .flatMap((w) => w.split(/(?<=\p{Ll})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}(?!s(?!\p{Ll}))(?!\p{Ll}\p{N})\p{Ll})|(?<=\p{N})(?=\p{L})|(?<=\p{L})(?=\p{N})/u))
    .filter((t) => t.length > 0)
    .map((t) => t.toLowerCase());
}

/** Leniently, whether a token says `word`: the same, an inflection or longer form, or an abbreviation of three letters or more. */
const says = (token, word) => token === word || (word.length >= 3 && token.startsWith(word)) || (token.length >= 3 && word.startsWith(token)) || (word.length >= 4 && token.startsWith(word.slice(0, 4)));
const list = (s) => s.split(", ").map((w) => w.trim()).filter(Boolean);
/** `word` is `token` with an inflection's ending (`cached` from `cache`): restated apart from forms.rs on purpose. */
const inflectedFrom = (token, word) => {
  const endings = ["s", "es", "d", "ed", "ing", "er", "ers", "ion", "ions"];
  const ends = (base) => word.startsWith(base) && endings.includes(word.slice(base.length));
  const doubled = word.startsWith(token + token.slice(-1)) && ["ed", "ing", "er", "ers"].includes(word.slice(token.length + 1));
  const pluralY = token.endsWith("y") && ["ies", "ied"].some((e) => word === token.slice(0, -1) + e);
  return ends(token) || doubled || pluralY || (token.endsWith("e") && ends(token.slice(0, -1)));
};

/**
 * Whether a query token meets a path's tokens as the ranking's path rule says it may: the same token, a run of
 * tokens written together (`queryparams`, never a number), a token it begins (two letters or more, not a number),
 * or a token that is the query's tokens written together (`authstatus` for `auth status`).
 */
const meetsPath = (q, pathTokens, queryTokens) =>
  pathTokens.some((t, i) => {
    if (t === q) return true;
    if (!/^\d+$/.test(q)) {
      let joined = "";
      for (const u of pathTokens.slice(i)) {
        joined += u;
        if (joined === q && u !== t) return true;
        if (!q.startsWith(joined)) break;
      }
    }
    if (q.length >= 2 && !/^\d+$/.test(q) && t.startsWith(q)) return true;
    return t.length > q.length && t.includes(q) && t === queryTokens.join("");
  });

/**
 * The reasons of one locate answer that are false of their files, and those no rule here checks.
 * `outline(abs)` returns the file's symbols ({ name, startLine, endLine }) or null.
 */
export async function falseWhyLines(result, root, outline) {
  const wrong = [];
  let checked = 0;
  let unchecked = 0;
  const listed = new Map(result.files.map((f, i) => [f.path, { ...f, at: i }]));
  for (const [at, f] of result.files.entries()) {
    const abs = path.join(root, f.path);
    const name = f.path.split("/").pop();
    const dir = f.path.includes("/") ? f.path.slice(0, f.path.lastIndexOf("/")) : "";
    const stem = name.includes(".") ? name.slice(0, name.lastIndexOf(".")) : name;
    let text = null;
    const textTokens = () => (text ??= new Set(tokens(fs.readFileSync(abs, "utf8"))));
    const above = (other) => listed.has(other) && listed.get(other).at < at;
    for (const w of f.why) {
      let ok;
      let m;
      if ((m = /^defines (\S+) (\S+) @ (\d+)-(\d+)/.exec(w))) {
        const symbols = (await outline(abs)) ?? [];
        ok = symbols.some((s) => s.name === m[2] && s.startLine === Number(m[3]) && s.endLine === Number(m[4]));
      } else if ((m = /^file name matches (.*)$/.exec(w))) {
        ok = list(m[1]).every((q) => meetsPath(q, tokens(name), tokens(result.query)));
      } else if ((m = /^file name has (.*)$/.exec(w))) {
        ok = list(m[1]).every((pair) => tokens(name).includes(pair.split(" for ")[0]));
      } else if ((m = /^directory matches (.*)$/.exec(w))) {
        ok = list(m[1]).every((q) => meetsPath(q, tokens(dir), tokens(result.query)));
      } else if ((m = /^path lacks (.*)$/.exec(w))) {
        ok = list(m[1]).every((q) => !meetsPath(q, tokens(f.path), tokens(result.query)));
      } else if ((m = /^path contains (.*)$/.exec(w))) {
        ok = f.path.toLowerCase().includes(m[1].toLowerCase());
      } else if ((m = /^text has (.*)$/.exec(w))) {
        // Strictly what a reader takes it to mean: the word itself, a longer form or an inflection (`cache` for
        // `cached`) is in the text; `sets for setsid` names another form, which must be in it as a token.
        const said = textTokens();
        ok = list(m[1]).every((item) => {
          const [form, word] = item.includes(" for ") ? item.split(" for ") : [null, item];
          // A form is the word cut short (`sets` for `setsid`) or inflected either way (`renaming` for `rename`).
          if (form !== null) return said.has(form) && (word.startsWith(form) || inflectedFrom(form, word) || inflectedFrom(word, form));
          return [...said].some((t) => t === word || (word.length >= 3 && t.startsWith(word)) || inflectedFrom(t, word));
        });
      } else if ((m = /^text says "(.*)" @ (\d+)$/.exec(w))) {
        // The quoted phrase, in any case, begins on that line; between its words the file may have white space, an
        // escaped line break or a string closed and opened again (restated apart from phrase.rs on purpose).
        const flat = (t) => t.toLowerCase().replace(/(?:\s|\\[nrt]|["'`]\s*[+.]?\s*["'`])+/g, " ");
        const lines = fs.readFileSync(abs, "utf8").split("\n");
        const from = flat(lines.slice(Number(m[2]) - 1).join("\n"));
        const at = from.indexOf(flat(m[1]));
        ok = at >= 0 && at < flat(lines[Number(m[2]) - 1] ?? "").length;
      } else if ((m = /^text (?:defines|names) (\S+)/.exec(w))) {
        ok = fs.readFileSync(abs, "utf8").toLowerCase().includes(m[1].toLowerCase());
      } else if (w === "the query names the whole file" || w === "every word of the file name is in the query") {
        const q = tokens(result.query);
        // A name token the answer says abbreviates a query word (`file name has rc for recover`) is one of them.
        const written = f.why.flatMap((x) => (/^file name has (.*)$/.exec(x)?.[1] ?? "").split(", ").map((p) => p.split(" for ")[0]));
        ok = tokens(stem).every((t) => q.some((x) => says(t, x) || t.startsWith(x)) || q.join("").includes(t) || written.includes(t));
      } else if ((m = /^(\S+) file: ranked down$/.exec(w))) {
        ok = f.role === m[1];
      } else if ((m = /^(\S+) file: ranked after (.*), (?:the code it is named for|code on the same words)$/.exec(w))) {
        ok = f.role === m[1] && above(m[2]) && listed.get(m[2]).role === "code";
      } else if ((m = /^header: ranked after (.*), the source of its name$/.exec(w))) {
        const other = m[1].split("/").pop();
        ok = above(m[1]) && other.slice(0, other.lastIndexOf(".")) === stem;
      } else if (w.startsWith("excluded by ignore rules")) {
        ok = f.ignored === true;
      } else {
        unchecked++; // fuzzy matches, entry points: not held to anything here
        continue;
      }
      checked++;
      if (!ok) wrong.push(`${f.path}: ${w}`);
    }
  }
  return { wrong, checked, unchecked };
}

/**
 * Whether `line` says `subject` as a whole identifier in any of its forms (`signal_group` = `signalGroup`, as the
 * ranking's identifier forms are; not `__subject`, not `subject_locked`).
 */
const namesWhole = (line, subject) => {
  const want = tokens(subject).join(" ");
  const leading = /^_+/.exec(subject)?.[0] ?? "";
  return (line.match(/[A-Za-z0-9_$]+/g) ?? []).some((id) => (/^_+/.exec(id)?.[0] ?? "") === leading && tokens(id).join(" ") === want);
};

/**
 * The call-site regions of one trace answer that show no call of the subject: the lines it shows (numbered
 * `N: text`, read whole from the file: a long line is cut in the answer) must say the subject as a whole
 * identifier on a line other than the region's first when the region is the subject's own definition.
 */
export function falseCallSites(result, subject, root) {
  const wrong = [];
  let checked = 0;
  for (const f of result.files) {
    let fileLines = null;
    const lineAt = (n) => (fileLines ??= fs.readFileSync(path.join(root, f.path), "utf8").split("\n"))[n - 1] ?? "";
    for (const g of f.regions ?? []) {
      if (g.kind !== "callsite") continue;
      checked++;
      const own = g.label.split(" ").pop() === subject;
      const shown = (g.body ?? []).filter((l) => /^\s*\d+:/.test(l)).map((l) => Number(l.slice(0, l.indexOf(":"))));
      const calls = shown.some((n) => !(own && n === g.startLine) && namesWhole(lineAt(n), subject));
      if (!calls) wrong.push(`${f.path}: ${g.label} @ ${g.startLine}`);
    }
  }
  return { wrong, checked };
}
