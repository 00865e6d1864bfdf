// End-to-end check of a running Strata server with the official OpenAI client library.
// Usage: STRATA_BASE_URL=http://localhost:8080/v1 STRATA_API_KEY=sk-... node e2e.mjs
import OpenAI from 'openai';
import assert from 'node:assert/strict';

const baseURL = process.env.STRATA_BASE_URL;
const apiKey = process.env.STRATA_API_KEY;
if (!baseURL || !apiKey) {
  console.error('set STRATA_BASE_URL and STRATA_API_KEY');
  process.exit(2);
}
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 120_000 });
let passed = 0;
let failed = 0;

async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e?.stack ?? e}`);
  }
}

const models = await client.models.list();
const model = models.data[0].id;

await check('models.list reports the served model with max_model_len', async () => {
  assert.equal(models.data.length, 1);
  assert.ok(models.data[0].max_model_len > 0);
});

await check('completions, not streaming', async () => {
  const r = await client.completions.create({ model, prompt: 'def add(a, b):', max_tokens: 8, temperature: 0 });
  assert.equal(r.object, 'text_completion');
  assert.equal(r.choices.length, 1);
  assert.ok(typeof r.choices[0].text === 'string');
  assert.ok(['length', 'stop'].includes(r.choices[0].finish_reason));
  assert.ok(r.usage.completion_tokens >= 1 && r.usage.completion_tokens <= 8);
  assert.equal(typeof r.usage.prompt_tokens_details.cached_tokens, 'number');
});

await check('completions, streaming with usage', async () => {
  const stream = await client.completions.create({ model, prompt: 'import os\n', max_tokens: 8, temperature: 0,
    stream: true, stream_options: { include_usage: true } });
  let text = '';
  let usage = null;
  let finish = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      text += c.text;
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  const whole = await client.completions.create({ model, prompt: 'import os\n', max_tokens: 8, temperature: 0 });
  assert.equal(text, whole.choices[0].text);
  assert.ok(finish);
  assert.equal(usage.completion_tokens, whole.usage.completion_tokens);
});

await check('chat completions, not streaming', async () => {
  const r = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hi' }],
    max_completion_tokens: 8, temperature: 0 });
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.ok(r.usage.total_tokens === r.usage.prompt_tokens + r.usage.completion_tokens);
});

await check('chat completions, streaming', async () => {
  const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hi' }],
    max_completion_tokens: 8, temperature: 0, stream: true, stream_options: { include_usage: true } });
  let content = '';
  let role = null;
  let usage = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      if (c.delta.role) role = c.delta.role;
      if (c.delta.content) content += c.delta.content;
    }
  }
  const whole = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say hi' }],
    max_completion_tokens: 8, temperature: 0 });
  assert.equal(role, 'assistant');
  assert.equal(content, whole.choices[0].message.content ?? '');
  assert.ok(usage.completion_tokens >= 1);
});

await check('repeated prefix is served from the prefix cache (cached_tokens)', async () => {
  const prefix = 'def f(x):\n    return x * 2\n\n'.repeat(40);
  const first = await client.completions.create({ model, prompt: prefix + '# one', max_tokens: 2 });
  const second = await client.completions.create({ model, prompt: prefix + '# two', max_tokens: 2 });
  assert.ok(first.usage.prompt_tokens > 256, `prompt of ${first.usage.prompt_tokens} tokens is too short for a 256-token block`);
  assert.ok(second.usage.prompt_tokens_details.cached_tokens > 0,
    `expected cached tokens on the repeated prefix, got ${JSON.stringify(second.usage)}`);
});

await check('a batch of prompts gets one choice per prompt, in order', async () => {
  const r = await client.completions.create({ model, prompt: ['def add(a, b):', 'import os\n'], max_tokens: 4, temperature: 0 });
  assert.deepEqual(r.choices.map((c) => c.index), [0, 1]);
  const one = await client.completions.create({ model, prompt: 'import os\n', max_tokens: 4, temperature: 0 });
  assert.equal(r.choices[1].text, one.choices[0].text);
});

await check('errors map to the client library error classes', async () => {
  await assert.rejects(client.completions.create({ model, prompt: 'x', temperature: -1 }),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && e.param === 'temperature');
  await assert.rejects(client.completions.create({ model: 'no-such-model', prompt: 'x' }),
    (e) => e instanceof OpenAI.NotFoundError && e.status === 404);
  const bad = new OpenAI({ baseURL, apiKey: 'sk-wrong-key-0000000000', maxRetries: 0 });
  await assert.rejects(bad.models.list(), (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
