// Plain-JS copy of the behaviour of Pi's core/tools/truncate.js (0.73.1, MIT), so the CLI and
// extensions/lib can run it without importing a Pi package. Keep it byte-for-byte compatible:
// Pi's renderer reads the TruncationResult we put in `details`.

export const DEFAULT_MAX_LINES = 2000;
export const DEFAULT_MAX_BYTES = 50 * 1024;

export function formatSize(bytes) {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

export function truncateHead(content, options = {}) {
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const totalBytes = Buffer.byteLength(content, "utf-8");
  const lines = content.split("\n");
  const totalLines = lines.length;
  // Same key order as Pi, so JSON of `details` is identical too.
  const result = (out, truncatedBy, outputLines, outputBytes, firstLineExceedsLimit) => ({
    content: out,
    truncated: truncatedBy !== null,
    truncatedBy,
    totalLines,
    totalBytes,
    outputLines,
    outputBytes,
    lastLinePartial: false,
    firstLineExceedsLimit,
    maxLines,
    maxBytes,
  });

  if (totalLines <= maxLines && totalBytes <= maxBytes) {
    return result(content, null, totalLines, totalBytes, false);
  }
  if (Buffer.byteLength(lines[0], "utf-8") > maxBytes) {
    return result("", "bytes", 0, 0, true);
  }

  const kept = [];
  let keptBytes = 0;
  let truncatedBy = "lines";
  for (let i = 0; i < lines.length && i < maxLines; i++) {
    const lineBytes = Buffer.byteLength(lines[i], "utf-8") + (i > 0 ? 1 : 0);
    if (keptBytes + lineBytes > maxBytes) {
      truncatedBy = "bytes";
      break;
    }
    kept.push(lines[i]);
    keptBytes += lineBytes;
  }
  if (kept.length >= maxLines && keptBytes <= maxBytes) truncatedBy = "lines";

  const out = kept.join("\n");
  return result(out, truncatedBy, kept.length, Buffer.byteLength(out, "utf-8"), false);
}
