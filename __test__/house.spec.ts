// The house's rules that a file can break by growing or moving (issue 48): every source file opens with a
// comment saying its one job, none outgrows MAX_LINES, and docs/house.md, the map a newcomer reads, lists
// every file with that job because it is made from the files.
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
// @ts-expect-error plain-JS script without type declarations
import { MAX_LINES, ROOT, houseMap, importCircles, openingComment, sourceFiles } from "../scripts/house-map.mjs";

const files: string[] = sourceFiles();

test("the map covers src, extensions and bin, test files left out", () => {
	assert.ok(files.length > 150, `only ${files.length} files`);
	for (const must of ["src/shell/registry.rs", "src/index/postings.rs", "src/discover/trace.rs", "src/discover/locate.rs", "src/index/build.rs", "bin/pi-utils.mjs"]) {
		assert.ok(files.includes(must), must);
	}
	assert.ok(!files.some((f) => /tests?\.rs$|\/tests\//.test(f)), "a test file is listed");
});

test("every source file opens with a comment that says its job", () => {
	const silent = files.filter((f) => openingComment(readFileSync(join(ROOT, f), "utf8")).length < 20);
	assert.deepEqual(silent, []);
});

test(`no source file outside the tests is over ${MAX_LINES} lines`, () => {
	const long = files
		.map((f) => [f, readFileSync(join(ROOT, f), "utf8").split("\n").length - 1] as const)
		.filter(([, n]) => n > MAX_LINES)
		.map(([f, n]) => `${f}: ${n}`);
	assert.deepEqual(long, []);
});

test("docs/house.md is the map the files make (run node scripts/house-map.mjs > docs/house.md)", () => {
	assert.equal(readFileSync(join(ROOT, "docs/house.md"), "utf8"), houseMap());
});

test("no import circle between the Rust files of a room", () => {
	// A file that holds a type and also starts what reads it (a plan and its pipelines, a walker's configuration
	// and its walks) was the usual circle; such a file keeps the type and the start moves beside it.
	assert.deepEqual(importCircles(), []);
});
