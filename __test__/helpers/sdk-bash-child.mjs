// A Pi SDK host in a child process, for the bash-settings specs: it creates a session the way an embedding
// program does (its own SettingsManager and agent directory), on either Pi (0.73 under `@mariozechner`, run by
// Node 20; 1.6 under `@earendil-works`, run by Node 22), with or without this package loaded, runs one prompt
// against the fake OpenAI-compatible server named in `<agentDir>/models.json`, and prints the tool results
// as one JSON line. Plain JS: Node 22 runs it without a loader.
//
// argv[2]: JSON { hostPackage, packageRoot? (load this package), cwd, agentDir,
//   settings: { inMemory?: object, projectTrusted?: boolean } }
const input = JSON.parse(process.argv[2]);
// Resolved from this file, so from the package's own node_modules.
const host = await import(input.hostPackage);
const { createAgentSession, DefaultResourceLoader, SessionManager, SettingsManager } = host;

const settingsManager =
	input.settings.inMemory !== undefined
		? SettingsManager.inMemory(input.settings.inMemory)
		: SettingsManager.create(input.cwd, input.agentDir, input.settings.projectTrusted === undefined ? {} : { projectTrusted: input.settings.projectTrusted });
const resourceLoader = new DefaultResourceLoader({
	cwd: input.cwd,
	agentDir: input.agentDir,
	settingsManager,
	additionalExtensionPaths: input.packageRoot ? [input.packageRoot] : [],
	noSkills: true,
	noPromptTemplates: true,
	noThemes: true,
	noContextFiles: true,
});
await resourceLoader.reload();
const { session } = await createAgentSession({
	cwd: input.cwd,
	agentDir: input.agentDir,
	resourceLoader,
	sessionManager: SessionManager.inMemory(input.cwd),
	settingsManager,
});
await session.bindExtensions({});
const toolResults = [];
session.subscribe((event) => {
	if (event.type !== "tool_execution_end") return;
	const content = event.result?.content ?? [];
	toolResults.push({ toolName: event.toolName, text: content.map((c) => (c.type === "text" ? c.text : "")).join(""), isError: event.isError });
});
await session.prompt("run it");
process.stdout.write(`${JSON.stringify({ toolResults })}\n`);
session.dispose();
process.exit(0);
