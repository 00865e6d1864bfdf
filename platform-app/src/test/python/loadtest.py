#!/usr/bin/env python3
"""Load test for hosts without Node (the GPU hosts have Python): the same protocol and checks as
platform-app/src/test/node/loadtest.mjs, standard library only.

N streaming clients send /v1/completions back to back for a fixed time (prompts from four shared
prefixes), then after the drain every KV page must be free or cached. Exit status 0 only with 0 errors
and 0 leaked pages.

  python3 loadtest.py [--url http://localhost:8080] [--clients 64] [--seconds 60] [--max-tokens 32]
                      [--model NAME] [--json out.json] [--prefix-repeat 1]
The API key comes from STRATA_API_KEY (omit it when the server runs with --strata.api.auth=none).
"""
import argparse
import json
import os
import threading
import time
import urllib.request

p = argparse.ArgumentParser()
p.add_argument('--url', default='http://localhost:8080')
p.add_argument('--clients', type=int, default=64)
p.add_argument('--seconds', type=float, default=60)
p.add_argument('--max-tokens', type=int, default=32)
p.add_argument('--model')
p.add_argument('--json')
p.add_argument('--prefix-repeat', type=int, default=1)
a = p.parse_args()
base = a.url.rstrip('/')
headers = {'content-type': 'application/json'}
if os.environ.get('STRATA_API_KEY'):
    headers['authorization'] = 'Bearer ' + os.environ['STRATA_API_KEY']

prefixes = [s * a.prefix_repeat for s in [
    'def quicksort(xs):\n    if len(xs) <= 1:\n        return xs\n    pivot = xs[0]\n' * 6,
    'class Stack:\n    def __init__(self):\n        self.items = []\n    def push(self, x):\n        self.items.append(x)\n' * 5,
    'import json\nimport os\n\ndef load(path):\n    with open(path) as f:\n        return json.load(f)\n' * 6,
    '# utility functions\n',
]]


def get(path):
    with urllib.request.urlopen(urllib.request.Request(base + path, headers=headers), timeout=60) as r:
        return r.read().decode()


model = a.model or json.loads(get('/v1/models'))['data'][0]['id']
lock = threading.Lock()
stats = {'requests': 0, 'completion': 0, 'prompt': 0, 'cached': 0, 'errors': 0}
samples, ttft, itl = [], [], []
started = time.monotonic()
deadline = started + a.seconds


def error(msg):
    with lock:
        stats['errors'] += 1
        if len(samples) < 5:
            samples.append(msg)


def one(cid, n):
    prompt = prefixes[(cid + n) % len(prefixes)] + f'# request {cid}-{n}\n'
    body = json.dumps({'model': model, 'prompt': prompt, 'max_tokens': a.max_tokens, 'temperature': 0.7,
                       'stream': True, 'stream_options': {'include_usage': True}}).encode()
    t0 = time.monotonic()
    req = urllib.request.Request(base + '/v1/completions', data=body, headers=headers, method='POST')
    try:
        res = urllib.request.urlopen(req, timeout=600)
    except urllib.error.HTTPError as e:
        error(f'HTTP {e.code}: {e.read()[:200]!r}')
        return
    except Exception as e:  # connection refused, reset
        error(f'connect: {e}')
        return
    last, done, usage, mine_ttft, mine_itl = None, False, None, [], []
    with res:
        for raw in res:
            line = raw.decode().rstrip('\n')
            if not line.startswith('data: '):
                continue
            data = line[6:]
            if data == '[DONE]':
                done = True
                break
            chunk = json.loads(data)
            if chunk.get('error'):
                error('stream error: ' + str(chunk['error'].get('message')))
                continue
            if chunk.get('usage'):
                usage = chunk['usage']
            ch = chunk.get('choices') or []
            if ch and ch[0].get('text'):
                now = time.monotonic()
                (mine_ttft if last is None else mine_itl).append(1000 * (now - (t0 if last is None else last)))
                last = now
    if not done:
        error('stream ended without [DONE]')
        return
    if not usage:
        error('no usage chunk')
        return
    with lock:
        stats['requests'] += 1
        stats['completion'] += usage['completion_tokens']
        stats['prompt'] += usage['prompt_tokens']
        stats['cached'] += (usage.get('prompt_tokens_details') or {}).get('cached_tokens', 0)
        ttft.extend(mine_ttft)
        itl.extend(mine_itl)


def client(cid):
    n = 0
    while time.monotonic() < deadline:
        one(cid, n)
        n += 1


threads = [threading.Thread(target=client, args=(i,)) for i in range(a.clients)]
for t in threads:
    t.start()
for t in threads:
    t.join()
elapsed = time.monotonic() - started


def metric(text, name, want=lambda l: True):
    total, found = 0.0, False
    for l in text.split('\n'):
        if (l.startswith(name + '{') or l.startswith(name + ' ')) and want(l):
            total += float(l.split()[-1])
            found = True
    return total if found else float('nan')


prom = ''
for _ in range(300):
    prom = get('/actuator/prometheus')
    if metric(prom, 'strata_num_requests_running') == 0 and metric(prom, 'strata_num_requests_waiting') == 0:
        break
    time.sleep(0.1)
pages = {s: metric(prom, 'strata_kv_pages', lambda l, s=s: f'state="{s}"' in l) for s in ('used', 'total', 'cached', 'free')}
leaked = pages['used'] + (pages['total'] - pages['cached'] - pages['free'] - pages['used'])


def pct(xs, q):
    if not xs:
        return float('nan')
    s = sorted(xs)
    return s[min(len(s) - 1, int(q / 100 * len(s)))]


result = {'clients': a.clients, 'seconds': a.seconds, 'maxTokens': a.max_tokens, 'model': model,
          'elapsedSeconds': round(elapsed, 1), 'requests': stats['requests'], 'errors': stats['errors'],
          'requestsPerSecond': round(stats['requests'] / elapsed, 2),
          'outputTokensPerSecond': round(stats['completion'] / elapsed, 1), 'promptTokens': stats['prompt'],
          'cachedPromptTokens': stats['cached'],
          'ttftMs': {'p50': round(pct(ttft, 50), 1), 'p99': round(pct(ttft, 99), 1)},
          'itlMs': {'p50': round(pct(itl, 50), 1), 'p99': round(pct(itl, 99), 1)},
          'kvPagesAfterDrain': dict(pages, leaked=leaked), 'errorSamples': samples}
print(json.dumps(result, indent=2))
if a.json:
    with open(a.json, 'w') as f:
        json.dump(result, f, indent=2)
ok = stats['errors'] == 0 and leaked == 0
print('LOAD TEST OK: 0 errors, 0 leaked pages' if ok else f'LOAD TEST FAILED: {stats["errors"]} errors, leaked pages: {leaked}')
raise SystemExit(0 if ok else 1)
