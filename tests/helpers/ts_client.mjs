// An MCP client built on the real TypeScript SDK: starts a server over stdio exactly as told (command,
// args, cwd, env), lists its tools, makes the calls given, prints one JSON object. The tests copy it
// beside the node_modules that hold @modelcontextprotocol/sdk, where Node resolves the import.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const spec = JSON.parse(process.argv[2]);
const transport = new StdioClientTransport({
  command: spec.command,
  args: spec.args,
  cwd: spec.cwd,
  env: spec.env,
  stderr: "inherit",
});
const client = new Client({ name: "secure-shell-tests", version: "1.0.0" });
await client.connect(transport);
const result = { tools: (await client.listTools()).tools.map((tool) => tool.name).sort(), calls: [] };
for (const call of spec.calls) {
  result.calls.push(await client.callTool({ name: call.name, arguments: call.arguments }));
}
await client.close();
process.stdout.write(JSON.stringify(result) + "\n");
