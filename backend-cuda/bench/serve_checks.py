#!/usr/bin/env python3
"""What a user does first with a running server, recorded as JSON: list the model, greedy completions with
logprobs (plain and streaming), prompt logprobs, the same greedy completion without logprobs (its tokens are the
backend's argmax, not the host sampler's), a chat completion (plain and streaming), and the admin API's and
console's view of the serving backend. Used by h200-run.sh's serve step to run the same checks
against the CUDA and the CPU backend and compare them.

  serve_checks.py --url http://localhost:18080 --out result.json [--password ADMIN_PW] [--pages DIR]
"""
import argparse
import http.cookiejar
import json
import re
import time
import urllib.parse
import urllib.request

p = argparse.ArgumentParser()
p.add_argument('--url', default='http://localhost:18080')
p.add_argument('--out', required=True)
p.add_argument('--password')
p.add_argument('--pages', help='save the console pages (dashboard, plugins) as HTML here')
a = p.parse_args()
base = a.url.rstrip('/')
H = {'content-type': 'application/json'}


def post(path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), headers=H, method='POST')
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=300) as r:
            return r.status, json.loads(r.read()), time.monotonic() - t0
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b'{}'), time.monotonic() - t0


def stream(path, body):
    req = urllib.request.Request(base + path, data=json.dumps(dict(body, stream=True)).encode(), headers=H,
                                 method='POST')
    events, done = [], False
    with urllib.request.urlopen(req, timeout=300) as r:
        for raw in r:
            line = raw.decode().strip()
            if line == 'data: [DONE]':
                done = True
            elif line.startswith('data: '):
                events.append(json.loads(line[6:]))
    return events, done


result = {}
models = json.loads(urllib.request.urlopen(base + '/v1/models').read())
model = models['data'][0]['id']
result['models'] = models
prompts = ['def fibonacci(n):\n', 'class Stack:\n    def __init__(self):\n', 'import os\n\n# read a file\n']
result['completions'] = []
for pr in prompts:
    status, body, secs = post('/v1/completions', {'model': model, 'prompt': pr, 'max_tokens': 16, 'temperature': 0,
                                                  'logprobs': 1, 'prompt_logprobs': 0})
    result['completions'].append({'prompt': pr, 'status': status, 'seconds': round(secs, 3), 'body': body})
    print(f'completion {status} in {secs:.2f}s: {json.dumps(body.get("choices", [{}])[0].get("text"))}')
events, done = stream('/v1/completions', {'model': model, 'prompt': prompts[0], 'max_tokens': 16, 'temperature': 0})
text = ''.join(e['choices'][0].get('text', '') for e in events if e.get('choices'))
result['completionStream'] = {'events': len(events), 'done': done, 'text': text}
print(f'streamed completion: {len(events)} events, [DONE]={done}: {json.dumps(text)}')
# the same greedy request with and without logprobs: without them the backend returns each row's argmax token
# instead of its logits, so the two texts agree only if the device's argmax is the host sampler's
status, body, _ = post('/v1/completions', {'model': model, 'prompt': prompts[0], 'max_tokens': 16, 'temperature': 0})
plain = body.get('choices', [{}])[0].get('text')
with_rows = result['completions'][0]['body'].get('choices', [{}])[0].get('text')
result['greedyArgmax'] = {'status': status, 'text': plain, 'sameAsWithLogprobs': plain == with_rows,
                          'sameAsStream': plain == text}
print(f'greedy without logprobs (device argmax) {status}: same text as with logprobs: {plain == with_rows},'
      f' as streamed: {plain == text}')
chat = {'model': model, 'messages': [{'role': 'user', 'content': 'Write a function that adds two numbers.'}],
        'max_tokens': 16, 'temperature': 0}
status, body, secs = post('/v1/chat/completions', chat)
result['chat'] = {'status': status, 'body': body, 'seconds': round(secs, 3)}
print(f'chat {status} in {secs:.2f}s: {json.dumps(body.get("choices", [{}])[0].get("message", {}).get("content"))}')
events, done = stream('/v1/chat/completions', chat)
text = ''.join((e['choices'][0].get('delta') or {}).get('content') or '' for e in events if e.get('choices'))
result['chatStream'] = {'events': len(events), 'done': done, 'text': text}
print(f'streamed chat: {len(events)} events, [DONE]={done}: {json.dumps(text)}')
status, body, _ = post('/v1/completions', {'model': model, 'prompt': 'x', 'max_tokens': -3})
result['badRequest'] = {'status': status, 'body': body}
print(f'bad request -> {status} {json.dumps(body)[:160]}')

if a.password:
    jar = http.cookiejar.CookieJar()
    op = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    login = op.open(base + '/login').read().decode()
    m = re.search(r'name="_csrf"[^>]*value="([^"]+)"', login) or re.search(r'value="([^"]+)"[^>]*name="_csrf"', login)
    data = urllib.parse.urlencode({'username': 'admin', 'password': a.password, '_csrf': m.group(1) if m else ''})
    op.open(base + '/login', data=data.encode()).read()
    result['plugins'] = json.loads(op.open(base + '/admin/api/plugins').read())
    for pl in result['plugins'] if isinstance(result['plugins'], list) else result['plugins'].get('plugins', []):
        print('plugin', pl.get('id') or pl.get('pluginId'), pl.get('state'), (pl.get('probe') or {}).get('available'))
    if a.pages:
        import os
        os.makedirs(a.pages, exist_ok=True)
        for name, path in (('dashboard', '/admin'), ('plugins', '/admin/plugins')):
            with open(os.path.join(a.pages, name + '.html'), 'wb') as f:
                f.write(op.open(base + path).read())
with open(a.out, 'w') as f:
    json.dump(result, f, indent=1)
