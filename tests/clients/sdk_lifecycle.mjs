// One task's lifecycle through the official TypeScript SDK, the way a TypeScript agent would run it,
// with every published schema compiled by Ajv in strict mode and every call checked against them:
// the arguments against the tool's input schema before sending, the result against its output
// schema. Prints a JSON report on stdout; exits 1 at the first thing that does not hold.
//
//   node sdk_lifecycle.mjs --url http://127.0.0.1:8766/mcp --scope project:x
//   node sdk_lifecycle.mjs --scope project:x -- slowave-graph stdio   (spawned, environment inherited)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import Ajv from "ajv";

function options(argv) {
  const split = argv.indexOf("--");
  const own = split === -1 ? argv : argv.slice(0, split);
  const command = split === -1 ? [] : argv.slice(split + 1);
  const value = (name) => {
    const at = own.indexOf(name);
    return at === -1 ? undefined : own[at + 1];
  };
  return { url: value("--url"), scope: value("--scope"), command };
}

function check(condition, message, detail) {
  if (!condition) {
    throw new Error(`${message}${detail === undefined ? "" : `: ${JSON.stringify(detail)}`}`);
  }
}

const { url, scope, command } = options(process.argv.slice(2));
check(scope && (url || command.length), "usage: --scope S (--url URL | -- command args…)");
const transport = url
  ? new StreamableHTTPClientTransport(new URL(url))
  : new StdioClientTransport({ command: command[0], args: command.slice(1), env: process.env, stderr: "inherit" });
const client = new Client({ name: "sdk-lifecycle", version: "1.0.0" });
await client.connect(transport);

const report = { server: client.getServerVersion(), tools: [], calls: [] };
const ajv = new Ajv({ strict: true, allErrors: true });
const validators = {};
for (const tool of (await client.listTools()).tools) {
  validators[tool.name] = { input: ajv.compile(tool.inputSchema), output: ajv.compile(tool.outputSchema) };
  report.tools.push(tool.name);
}

// A call as a strict client makes it: arguments valid before sending, the envelope valid after.
async function call(name, args, { expectOk = true } = {}) {
  const { input, output } = validators[name];
  const valid = input(args);
  if (expectOk) check(valid, `${name}: arguments refused by the published input schema`, input.errors);
  const result = await client.callTool({ name, arguments: args });
  const envelope = result.structuredContent;
  check(envelope !== undefined, `${name}: no structuredContent`, result);
  check(output(envelope), `${name}: result refused by the published output schema`, output.errors);
  check(envelope.ok === expectOk, `${name}: ok is ${envelope.ok}`, envelope.error ?? envelope.data);
  report.calls.push({ tool: name, ok: envelope.ok, schema_valid: valid });
  return envelope;
}

const claim = "The orders service retries payment webhooks three times with exponential backoff";
const first = (await call("slowave_activate", {
  scope, task: "Document how the orders service handles payment webhooks", initial_goal: "Write it down",
})).data;
const stored = (await call("slowave_remember", {
  scope, session_id: first.session_id, content: claim, type: "fact",
})).data;
await call("slowave_feedback", { retrieval_id: first.retrieval_id, coverage: "complete",
  memory_feedback: first.memories.map((m) => ({ memory_id: m.memory_id, assessment: "not_used" })) });
const found = (await call("slowave_recall", {
  scope, session_id: first.session_id, query: "How often are payment webhooks retried by the orders service?",
})).data;
report.recalled = found.memories.map((m) => m.content);
check(found.memories.some((m) => m.memory_id === stored.memory_id), "recall did not find the claim", found);
await call("slowave_feedback", { retrieval_id: found.retrieval_id, coverage: "complete",
  memory_feedback: found.memories.map((m) => ({
    memory_id: m.memory_id, assessment: m.memory_id === stored.memory_id ? "used" : "not_used",
  })) });
const committed = (await call("slowave_commit", {
  session_id: first.session_id, final_goal: "Webhook handling written down", outcome: "success",
  outcome_summary: "Recorded the retry policy of payment webhooks",
  verification: { status: "verified", summary: "Read the retry configuration", evidence_refs: ["orders/webhooks.yaml"] },
  procedure: { summary: "Document a service's webhook retries", steps: [{ summary: "Read its retry configuration" }],
    caveats: ["Retry settings can differ per environment"], deduplication_key: "docs.webhook-retries" },
})).data;
report.commit = { operation: committed.operation, procedure_id: committed.procedure_id ?? null };

// A string over its length: refused by the schema and by the server alike, in characters.
const tooLong = { scope, session_id: first.session_id, content: "x".repeat(8001), type: "fact" };
check(!validators.slowave_remember.input(tooLong), "the input schema accepted 8,001 characters");
const refused = await call("slowave_remember", tooLong, { expectOk: false });
report.too_long = refused.error.field_errors?.[0]?.message ?? refused.error.message;

await client.close();
process.stdout.write(`${JSON.stringify(report)}\n`);
