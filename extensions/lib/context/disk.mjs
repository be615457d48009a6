// The facts freshness compares: a file's identity and size (device, inode, size, mtime, ctime in ns) and a
// content hash of the whole file and of line ranges. Taken when the model is shown a file and again when a
// tool mentions it; a change is decided by the facts, never by anyone's word. Hashes are SHA-256 (node:crypto);
// lines are compared without a BOM and without the CR of CRLF, as Pi's read shows them to the model.

import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";

/** Larger files are compared by their stat facts only (no content hash): reading them on every call costs too much. */
export const HASH_LIMIT_BYTES = 4 * 1024 * 1024;

const sha = (s) => createHash("sha256").update(s).digest("hex").slice(0, 32);

/** The lines as the model reads them: BOM and CRs dropped. */
export function linesOf(text) {
  const t = text.startsWith("\ufeff") ? text.slice(1) : text;
  return t.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
}

/** Hash of lines `start..end` (1-based, inclusive) as shown; lines past the end count as absent. */
export function regionHash(lines, start, end) {
  return sha(lines.slice(Math.max(0, start - 1), Math.max(0, end)).join("\n"));
}

/** Hash of text the model was shown (a read's lines), comparable with `regionHash` of the file. */
export function shownHash(text) {
  return sha(linesOf(text).join("\n"));
}

/**
 * A disk reader with a cache keyed by the stat facts: a file whose device, inode, size, mtime and ctime are
 * all as before is not read again (ctime cannot be set back by utimes, so a rewrite always shows).
 */
export function createDisk() {
  /** @type {Map<string, { sig: string, size: number, hash: string | null, lines: string[] | null, ranges: Map<string, string> }>} */
  const cache = new Map();
  let cachedBytes = 0;
  return {
    /**
     * The file now: `{ missing: true }`, or `{ sig, size, hash, regionHash(start, end) }` (`hash` null and
     * `regionHash` null for a file past HASH_LIMIT_BYTES).
     * @param {string | Buffer} file absolute path
     */
    facts(file) {
      let st;
      try {
        st = statSync(file, { bigint: true });
      } catch {
        return { missing: true };
      }
      if (!st.isFile()) return { missing: true };
      const sig = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
      const key = typeof file === "string" ? file : `#b=${file.toString("hex")}`;
      let c = cache.get(key);
      if (!c || c.sig !== sig) {
        const size = Number(st.size);
        let hash = null;
        let lines = null;
        if (size <= HASH_LIMIT_BYTES) {
          try {
            const buf = readFileSync(file);
            hash = sha(buf);
            lines = linesOf(buf.toString("utf8"));
          } catch {
            return { missing: true };
          }
        }
        if (cachedBytes > 64 * 1024 * 1024) {
          cache.clear();
          cachedBytes = 0;
        }
        c = { sig, size, hash, lines, ranges: new Map() };
        cache.set(key, c);
        cachedBytes += size;
      }
      const { lines, ranges } = c;
      const hashOf = (s, e) => {
        const key = `${s}-${e}`;
        let h = ranges.get(key);
        if (h === undefined) ranges.set(key, (h = regionHash(/** @type {string[]} */ (lines), s, e)));
        return h;
      };
      return { missing: false, sig: c.sig, size: c.size, hash: c.hash, regionHash: lines ? hashOf : null };
    },
    clear() {
      cache.clear();
      cachedBytes = 0;
    },
  };
}
