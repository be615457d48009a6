// The native core's display rules in JS (src/search/display.rs and line_window.rs): how a raw-byte path is
// shown (`#b=` suffix for bytes that are not UTF-8), how a long line is windowed around its match, and the
// component-wise path order. The rg fallback turns rg's JSON into the native core's hits with them.

export const hex = (bytes) => Buffer.from(bytes).toString("hex");

/**
 * Length of the maximal valid prefix of a UTF-8 sequence at `i`, and whether it is complete.
 * @returns {[number, boolean]}
 */
function utf8Seq(b, i) {
	const c = b[i];
	if (c < 0x80) return [1, true];
	let n;
	let lo = 0x80;
	let hi = 0xbf;
	if (c >= 0xc2 && c <= 0xdf) n = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c === 0xe0) lo = 0xa0;
		if (c === 0xed) hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c === 0xf0) lo = 0x90;
		if (c === 0xf4) hi = 0x8f;
	} else return [1, false];
	for (let k = 1; k < n; k++) {
		const d = b[i + k];
		const ok = d !== undefined && (k === 1 ? d >= lo && d <= hi : d >= 0x80 && d <= 0xbf);
		if (!ok) return [k, false];
	}
	return [n, true];
}

/** `{ text, pathBytes? }` for a relative `/`-separated path given as raw bytes. */
export function displayPath(bytes) {
	const buf = Buffer.from(bytes);
	let text = "";
	const invalid = [];
	let start = 0;
	for (let i = 0; i < buf.length; ) {
		const [len, ok] = utf8Seq(buf, i);
		if (!ok) {
			text += buf.subarray(start, i).toString("utf8") + "\uFFFD";
			invalid.push(...buf.subarray(i, i + len));
			start = i + len;
		}
		i += len;
	}
	if (invalid.length === 0) {
		text = buf.toString("utf8");
		return { text: /#b=(-|[0-9a-f]+)$/.test(text) ? `${text}#b=-` : text };
	}
	text += buf.subarray(start).toString("utf8");
	return { text: `${text}#b=${hex(invalid)}`, pathBytes: hex(buf) };
}

const isCharStart = (byte) => (byte & 0xc0) !== 0x80;

function charCount(buf, end = buf.length) {
	let n = 0;
	for (let i = 0; i < end; i++) if (isCharStart(buf[i])) n++;
	return n;
}

function byteOfChar(buf, n, from = 0) {
	if (n === 0) return from;
	let seen = 0;
	for (let i = from; i < buf.length; i++) {
		if (isCharStart(buf[i])) {
			if (seen === n) return i;
			seen++;
		}
	}
	return buf.length;
}

/** Cuts a line (terminator removed) to `max` characters around the byte offset `focus`. */
export function windowLine(buf, focus, max) {
	const whole = { text: buf.toString("utf8"), cutBefore: 0, cutAfter: 0 };
	if (buf.length <= max || max === 0) return whole;
	const total = charCount(buf);
	if (total <= max) return whole;
	const focusChar = focus === undefined ? 0 : charCount(buf, Math.min(focus, buf.length));
	let start = Math.max(0, focusChar - Math.min(Math.floor(max / 4), 80));
	if (start + max > total) start = total - max;
	const from = byteOfChar(buf, start);
	const to = byteOfChar(buf, max, from);
	return { text: buf.subarray(from, to).toString("utf8"), cutBefore: start, cutAfter: total - start - max };
}

export function trimTerminator(buf) {
	let end = buf.length;
	if (end > 0 && buf[end - 1] === 0x0a) end--;
	if (end > 0 && buf[end - 1] === 0x0d) end--;
	return buf.subarray(0, end);
}

export const rgData = (v) => (v == null ? Buffer.alloc(0) : v.text !== undefined ? Buffer.from(v.text) : Buffer.from(v.bytes, "base64"));

/** rg prints `./a/b` for the root `.`; hits and listings use `a/b`. */
export function relBytes(buf) {
	return buf[0] === 0x2e && buf[1] === 0x2f ? buf.subarray(2) : buf;
}

/** Component-wise byte order, as `rg --sort path` and the native core sort. */
export function comparePaths(a, b) {
	const x = a.split("/");
	const y = b.split("/");
	for (let i = 0; i < Math.min(x.length, y.length); i++) {
		const c = Buffer.compare(Buffer.from(x[i]), Buffer.from(y[i]));
		if (c !== 0) return c;
	}
	return x.length - y.length;
}
