// Load test: N concurrent streaming clients against a running Strata server for a fixed time, then a
// post-drain check that every KV page is free or cached (no leak).
//
//   node loadtest.mjs [--url http://localhost:8080] [--clients 64] [--seconds 60] [--max-tokens 32]
//                     [--model NAME] [--json out.json] [--prefix-repeat 1]
// --prefix-repeat N makes the shared prefixes N times longer (N = 4: about 800 tokens, so requests of a group
// share whole 256-token blocks and resume from the prefix cache).
// The API key comes from STRATA_API_KEY (omit it when the server runs with --strata.api.auth=none).
// Exit status 0 only with 0 errors and 0 leaked pages.

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => {
  if (a.startsWith('--')) acc.push([a.slice(2), all[i + 1]]);
  return acc;
}, []));
const base = (args.url ?? 'http://localhost:8080').replace(/\/$/, '');
const clients = Number(args.clients ?? 64);
const seconds = Number(args.seconds ?? 60);
const maxTokens = Number(args['max-tokens'] ?? 32);
const key = process.env.STRATA_API_KEY;
const headers = { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) };

// Prompts share a long common prefix in groups, as chat and agent traffic does, so the prefix cache is
// exercised too; the tail differs per request.
const prefixes = [
  'def quicksort(xs):\n    if len(xs) <= 1:\n        return xs\n    pivot = xs[0]\n'.repeat(6),
  'class Stack:\n    def __init__(self):\n        self.items = []\n    def push(self, x):\n        self.items.append(x)\n'.repeat(5),
  'import json\nimport os\n\ndef load(path):\n    with open(path) as f:\n        return json.load(f)\n'.repeat(6),
  '# utility functions\n',
].map(p => p.repeat(Number(args['prefix-repeat'] ?? 1)));

const modelsRes = await fetch(`${base}/v1/models`, { headers });
if (!modelsRes.ok) {
  console.error(`GET /v1/models failed: ${modelsRes.status} ${await modelsRes.text()}`);
  process.exit(2);
}
const model = args.model ?? (await modelsRes.json()).data[0].id;

const ttft = [];
const itl = [];
let requests = 0;
let completionTokens = 0;
let promptTokens = 0;
let cachedTokens = 0;
let errors = 0;
const errorSamples = [];
const started = performance.now();
const deadline = started + seconds * 1000;

function recordError(msg) {
  errors++;
  if (errorSamples.length < 5) errorSamples.push(msg);
}

async function one(clientId, n) {
  const prompt = prefixes[(clientId + n) % prefixes.length] + `# request ${clientId}-${n}\n`;
  const t0 = performance.now();
  let res;
  try {
    res = await fetch(`${base}/v1/completions`, {
      method: 'POST', headers,
      body: JSON.stringify({ model, prompt, max_tokens: maxTokens, temperature: 0.7, stream: true,
        stream_options: { include_usage: true } }),
    });
  } catch (e) {
    recordError(`connect: ${e.message}`);
    return;
  }
  if (res.status !== 200) {
    recordError(`HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`);
    return;
  }
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  let last = null;
  let done = false;
  let usage = null;
  while (!done) {
    const { value, done: eof } = await reader.read();
    if (eof) break;
    buf += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      const event = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      if (!event.startsWith('data: ')) continue;
      const data = event.slice(6);
      if (data === '[DONE]') { done = true; break; }
      const chunk = JSON.parse(data);
      if (chunk.error) { recordError(`stream error: ${chunk.error.message}`); continue; }
      if (chunk.usage) usage = chunk.usage;
      if (chunk.choices?.length && chunk.choices[0].text !== undefined && chunk.choices[0].text !== '') {
        const now = performance.now();
        if (last === null) ttft.push(now - t0); else itl.push(now - last);
        last = now;
      }
    }
  }
  if (!done) { recordError('stream ended without [DONE]'); return; }
  if (!usage) { recordError('no usage chunk'); return; }
  requests++;
  completionTokens += usage.completion_tokens;
  promptTokens += usage.prompt_tokens;
  cachedTokens += usage.prompt_tokens_details?.cached_tokens ?? 0;
}

async function client(id) {
  for (let n = 0; performance.now() < deadline; n++) {
    await one(id, n);
  }
}

await Promise.all(Array.from({ length: clients }, (_, i) => client(i)));
const elapsed = (performance.now() - started) / 1000;

// Drain: the engine must report nothing running or waiting, then every page must be free or cached.
function metric(text, name, filter = () => true) {
  let sum = 0;
  let found = false;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{') && !line.startsWith(name + ' ')) continue;
    if (!filter(line)) continue;
    sum += Number(line.trim().split(/\s+/).pop());
    found = true;
  }
  return found ? sum : NaN;
}
let prom = '';
for (let i = 0; i < 300; i++) {
  prom = await (await fetch(`${base}/actuator/prometheus`)).text();
  if (metric(prom, 'strata_num_requests_running') === 0 && metric(prom, 'strata_num_requests_waiting') === 0) break;
  await new Promise((r) => setTimeout(r, 100));
}
const pages = (state) => metric(prom, 'strata_kv_pages', (l) => l.includes(`state="${state}"`));
const used = pages('used');
const total = pages('total');
const cached = pages('cached');
const free = pages('free');
const leaked = Number.isNaN(used) ? NaN : used + (total - cached - free - used);

const pct = (xs, p) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const result = {
  clients, seconds, maxTokens, model, elapsedSeconds: +elapsed.toFixed(1),
  requests, errors, requestsPerSecond: +(requests / elapsed).toFixed(2),
  outputTokensPerSecond: +(completionTokens / elapsed).toFixed(1),
  promptTokens, cachedPromptTokens: cachedTokens,
  ttftMs: { p50: +pct(ttft, 50).toFixed(1), p99: +pct(ttft, 99).toFixed(1) },
  itlMs: { p50: +pct(itl, 50).toFixed(1), p99: +pct(itl, 99).toFixed(1) },
  kvPagesAfterDrain: { total, used, cached, free, leaked },
  errorSamples,
};
console.log(JSON.stringify(result, null, 2));
if (args.json) (await import('node:fs')).writeFileSync(args.json, JSON.stringify(result, null, 2));
const ok = errors === 0 && leaked === 0;
console.log(ok ? 'LOAD TEST OK: 0 errors, 0 leaked pages' : `LOAD TEST FAILED: ${errors} errors, leaked pages: ${leaked}`);
process.exit(ok ? 0 : 1);
