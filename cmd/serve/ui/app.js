// Conform playground: a streamed chat against this server's
// /v1/chat/completions, a JSON Schema editor with examples, the request as
// curl, and the explain panel (/v1/conform/explain) for the schema being
// edited. Plain DOM: everything from the server or the model goes in
// through textContent, never as markup.
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);
  const keyStore = 'conform.apiKey';
  let examples = {};
  let running = null; // the AbortController of the request streaming
  let explainSeq = 0; // answers to older explain requests are dropped
  let explainTimer = 0;
  let explained = ''; // the last explain request drawn, not asked again

  // el makes an element with a class and text.
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = String(text);
    return e;
  }

  function headers() {
    const h = { 'Content-Type': 'application/json' };
    const key = $('api-key').value.trim();
    if (key) h.Authorization = 'Bearer ' + key;
    return h;
  }

  // apiError is the message of an error body (OpenAI's envelope) or the
  // status line.
  async function apiError(res) {
    const text = await res.text();
    try {
      const e = JSON.parse(text).error;
      if (e && e.message) return e.message + (e.code ? ' (' + e.code + ')' : '');
    } catch (_) { /* not JSON */ }
    return res.status + ' ' + res.statusText + (text ? ': ' + text.slice(0, 300) : '');
  }

  // schemaOf parses the editor: {schema} or {error}; free text needs none.
  function schemaOf() {
    if ($('mode').value === 'text') return { schema: null };
    const src = $('schema').value;
    if (!src.trim()) return { error: 'the schema is empty' };
    try {
      return { schema: JSON.parse(src) };
    } catch (e) {
      return { error: 'invalid JSON: ' + e.message };
    }
  }

  // constraint is the structured-output part of the request for the
  // mode, shared by chat and explain.
  function constraint(schema) {
    const strict = $('strict').checked;
    switch ($('mode').value) {
      case 'schema':
        return { response_format: { type: 'json_schema', json_schema: { name: 'playground', schema, strict } } };
      case 'tool':
        return {
          tools: [{ type: 'function', function: { name: $('tool-name').value.trim() || 'tool', description: 'called by the playground', parameters: schema, strict } }],
          tool_choice: 'required',
          parallel_tool_calls: false,
        };
    }
    return {};
  }

  // requestBody is the chat request the page sends, or {error}.
  function requestBody() {
    const s = schemaOf();
    if (s.error) return s;
    const body = { messages: [{ role: 'user', content: $('prompt').value }] };
    if ($('model').value) body.model = $('model').value;
    Object.assign(body, constraint(s.schema));
    const max = parseInt($('max-tokens').value, 10);
    if (max > 0) body.max_tokens = max;
    const temp = parseFloat($('temperature').value);
    if (!Number.isNaN(temp)) body.temperature = temp;
    body.stream = true;
    body.stream_options = { include_usage: true };
    return { body };
  }

  const shellQuote = (s) => "'" + s.replace(/'/g, "'\\''") + "'";

  // refresh redraws what follows from the form: the schema error, the
  // curl command; and schedules an explain.
  function refresh() {
    document.body.dataset.mode = $('mode').value;
    const r = requestBody();
    $('schema-error').hidden = !r.error;
    $('schema-error').textContent = r.error ? 'Schema: ' + r.error + ' — not sent.' : '';
    $('send').disabled = !!running || !!r.error;
    if (r.error) {
      $('curl').textContent = '# fix the schema first: ' + r.error;
    } else {
      const lines = ['curl -N ' + shellQuote(location.origin + '/v1/chat/completions'), "  -H 'Content-Type: application/json'"];
      const key = $('api-key').value.trim();
      if (key) lines.push('  -H ' + shellQuote('Authorization: Bearer ' + key));
      lines.push('  -d ' + shellQuote(JSON.stringify(r.body)));
      $('curl').textContent = lines.join(' \\\n');
    }
    clearTimeout(explainTimer);
    explainTimer = setTimeout(explain, 300);
  }

  async function loadModels() {
    const sel = $('model');
    try {
      const res = await fetch('/v1/models', { headers: headers() });
      if (!res.ok) throw new Error(await apiError(res));
      const list = await res.json();
      const keep = sel.value;
      sel.replaceChildren();
      for (const m of list.data || []) sel.append(new Option(m.id, m.id));
      if (keep && [...sel.options].some((o) => o.value === keep)) sel.value = keep;
      $('server-status').textContent = '';
    } catch (e) {
      sel.replaceChildren();
      $('server-status').textContent = 'models: ' + e.message;
    }
    refresh();
  }

  function pickExample() {
    const ex = examples[$('example').value];
    if (!ex) return;
    $('schema').value = JSON.stringify(ex.schema, null, 2);
    $('mode').value = ex.mode;
    if (ex.tool) $('tool-name').value = ex.tool;
    if (ex.prompt) $('prompt').value = ex.prompt;
    refresh();
  }

  // ---- explain panel ----

  function clearExplain(note) {
    $('explain-error').hidden = true;
    $('explain-note').textContent = note || '';
    for (const id of ['explain-sizes', 'explain-compile', 'explain-start', 'explain-shortest', 'explain-min-tokens']) $(id).textContent = '';
    $('explain-keywords').replaceChildren();
    $('explain-samples').replaceChildren();
  }

  function explainError(msg) {
    $('explain-error').hidden = false;
    $('explain-error').textContent = msg;
  }

  async function explain() {
    const seq = ++explainSeq;
    const panel = $('explain');
    const s = schemaOf();
    if (s.error) {
      clearExplain('Fix the schema to see what it compiles to.');
      panel.dataset.state = 'off';
      return;
    }
    if (s.schema === null) {
      clearExplain('Free text: no constraint, nothing to explain.');
      panel.dataset.state = 'off';
      return;
    }
    const body = Object.assign({ samples: 3, seed: 1 }, constraint(s.schema));
    if ($('model').value) body.model = $('model').value;
    const key = JSON.stringify(body) + '\n' + $('api-key').value;
    if (key === explained && panel.dataset.state === 'done') return;
    explained = key;
    panel.dataset.state = 'loading';
    let res, ex;
    try {
      res = await fetch('/v1/conform/explain', { method: 'POST', headers: headers(), body: JSON.stringify(body) });
      ex = res.ok ? await res.json() : await apiError(res);
    } catch (e) {
      ex = e.message;
    }
    if (seq !== explainSeq) return;
    clearExplain();
    if (typeof ex === 'string') {
      explainError('explain: ' + ex);
      panel.dataset.state = 'error';
      return;
    }
    renderExplain(ex);
    panel.dataset.state = ex.error ? 'refused' : 'done';
  }

  function renderExplain(ex) {
    const rows = $('explain-keywords');
    const notes = [];
    for (const sc of ex.schemas || []) {
      const head = el('tr', 'schema-row');
      const th = el('th', '', sc.param + (sc.strict ? ' (strict)' : ' (lenient)'));
      th.colSpan = 4;
      head.append(th);
      rows.append(head);
      for (const k of sc.keywords || []) {
        const tr = el('tr', 'status-' + k.status);
        tr.append(el('td', 'pointer', k.pointer === '' ? '(root)' : k.pointer), el('td', '', k.keyword),
          el('td', 'status', k.status), el('td', 'message', k.message || ''));
        rows.append(tr);
      }
      if (sc.strict_error && !sc.strict && !ex.error) notes.push('strict mode would refuse ' + sc.param + ': ' + sc.strict_error.message);
    }
    if (ex.error) {
      explainError('Refused: ' + ex.error.message + (ex.error.code ? ' (' + ex.error.code + ')' : ''));
      return;
    }
    $('explain-note').textContent = notes.join(' · ');
    if (ex.sizes) $('explain-sizes').textContent = ex.sizes.ast_nodes + ' AST nodes · ' + ex.sizes.nfa_states + ' NFA states · ' + ex.sizes.dfa_states + ' DFA states (built to the first mask)';
    if (ex.compile_ms !== undefined) $('explain-compile').textContent = ex.compile_ms.toFixed(2) + ' ms, cache ' + ex.cache;
    if (ex.start_allowed_tokens !== undefined) $('explain-start').textContent = ex.start_allowed_tokens;
    if (ex.shortest) {
      $('explain-shortest').textContent = ex.shortest.text;
      $('explain-min-tokens').textContent = ex.min_tokens + ' tokens: the smallest max_tokens that completes';
    } else if (ex.min_tokens_error) {
      $('explain-min-tokens').textContent = ex.min_tokens_error;
    }
    for (const s of ex.samples || []) {
      const li = el('li');
      li.append(el('code', '', s.text), el('span', 'muted', ' ' + s.tokens + ' tokens'));
      $('explain-samples').append(li);
    }
    if (ex.samples_error) $('explain-samples').append(el('li', 'error', ex.samples_error));
  }

  // ---- chat ----

  // sseData yields the data of each server-sent event of a fetch body.
  async function* sseData(body) {
    const reader = body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    const take = function* (final) {
      let i;
      while ((i = buf.indexOf('\n\n')) >= 0 || (final && buf.trim())) {
        const ev = i >= 0 ? buf.slice(0, i) : buf;
        buf = i >= 0 ? buf.slice(i + 2) : '';
        const data = ev.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(l[5] === ' ' ? 6 : 5));
        if (data.length) yield data.join('\n');
      }
    };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true }).replace(/\r/g, '');
      yield* take(false);
    }
    buf += dec.decode();
    yield* take(true);
  }

  // turn adds an exchange to the chat; the assistant's parts of the newest
  // get the stable ids (#output, #reasoning, #tool-calls, #finish, #usage,
  // #json-check), taken from the one before.
  function turn(prompt, mode) {
    for (const id of ['output', 'reasoning', 'reasoning-text', 'tool-calls', 'finish', 'usage', 'json-check', 'unenforced', 'chat-error']) {
      const old = $(id);
      if (old) old.removeAttribute('id');
    }
    const u = el('div', 'turn user');
    u.append(el('div', 'who', 'you'), el('div', 'text', prompt));
    const a = el('div', 'turn assistant');
    const t = {
      reasoning: el('details', 'reasoning'), reasoningText: el('pre', ''), output: el('pre', 'content'),
      calls: el('div', 'calls'), finish: el('span', 'finish'), usage: el('span', 'usage muted'),
      check: el('span', 'check'), unenforced: el('div', 'unenforced muted'), error: el('div', 'error'),
    };
    t.reasoning.hidden = true;
    t.reasoning.append(el('summary', '', 'reasoning'), t.reasoningText);
    t.error.hidden = true;
    [t.reasoning.id, t.reasoningText.id, t.output.id, t.calls.id] = ['reasoning', 'reasoning-text', 'output', 'tool-calls'];
    [t.finish.id, t.usage.id, t.check.id, t.unenforced.id, t.error.id] = ['finish', 'usage', 'json-check', 'unenforced', 'chat-error'];
    const meta = el('div', 'meta');
    meta.append(t.finish, t.check, t.usage);
    a.append(el('div', 'who', 'assistant · ' + mode), t.unenforced, t.reasoning, t.output, t.calls, t.error, meta);
    $('chat').append(u, a);
    a.scrollIntoView({ block: 'nearest' });
    return t;
  }

  function callView(t, calls, k) {
    if (!calls[k]) {
      const v = el('div', 'tool-call');
      calls[k] = { name: '', args: '', nameEl: el('span', 'tool-name'), argsEl: el('pre', 'tool-args') };
      v.append(el('span', 'muted', 'call '), calls[k].nameEl, calls[k].argsEl);
      t.calls.append(v);
    }
    return calls[k];
  }

  // check shows whether the output parses as JSON: the content in schema
  // mode, each call's arguments in tool mode (pretty-printed once whole).
  function check(t, mode, calls) {
    const fail = (msg) => { t.check.textContent = msg; t.check.className = 'check bad'; };
    if (mode === 'schema') {
      try {
        JSON.parse(t.output.textContent);
      } catch (e) {
        return fail('not JSON: ' + e.message);
      }
    } else if (mode === 'tool') {
      const list = Object.values(calls);
      if (!list.length) return fail('no tool call');
      for (const c of list) {
        try {
          c.argsEl.textContent = JSON.stringify(JSON.parse(c.args), null, 2);
        } catch (e) {
          return fail(c.name + ': arguments not JSON: ' + e.message);
        }
      }
    } else {
      return;
    }
    t.check.textContent = 'valid JSON ✓';
    t.check.className = 'check ok';
  }

  async function send() {
    const r = requestBody();
    if (r.error || running) return;
    const mode = $('mode').value;
    const t = turn(r.body.messages[0].content, mode);
    const calls = {};
    running = new AbortController();
    document.body.dataset.state = 'streaming';
    $('stop').disabled = false;
    $('send').disabled = true;
    $('status').textContent = 'streaming…';
    let state = 'done';
    const started = performance.now();
    try {
      const res = await fetch('/v1/chat/completions', { method: 'POST', headers: headers(), body: JSON.stringify(r.body), signal: running.signal });
      if (!res.ok) throw new Error(await apiError(res));
      for await (const data of sseData(res.body)) {
        if (data === '[DONE]') break;
        const ck = JSON.parse(data);
        if (ck.error) throw new Error(ck.error.message || JSON.stringify(ck.error));
        if (ck.conform_unenforced) t.unenforced.textContent = 'not enforced: ' + ck.conform_unenforced.map((u) => u.param + '#' + u.pointer + ' ' + u.keyword).join(', ');
        if (ck.usage) {
          const u = ck.usage;
          let s = 'usage: ' + u.prompt_tokens + ' prompt + ' + u.completion_tokens + ' completion = ' + u.total_tokens + ' tokens';
          if (u.completion_tokens_details && u.completion_tokens_details.reasoning_tokens) s += ' (' + u.completion_tokens_details.reasoning_tokens + ' reasoning)';
          t.usage.textContent = s;
        }
        for (const ch of ck.choices || []) {
          const d = ch.delta || {};
          if (d.reasoning_content) {
            t.reasoning.hidden = false;
            t.reasoningText.textContent += d.reasoning_content;
          }
          if (d.content) t.output.textContent += d.content;
          for (const tc of d.tool_calls || []) {
            const c = callView(t, calls, tc.index || 0);
            const f = tc.function || {};
            if (f.name) c.nameEl.textContent = c.name = f.name;
            if (f.arguments) c.argsEl.textContent = c.args += f.arguments;
          }
          if (ch.finish_reason) t.finish.textContent = 'finish_reason: ' + ch.finish_reason;
        }
      }
      check(t, mode, calls);
    } catch (e) {
      state = 'error';
      t.error.hidden = false;
      t.error.textContent = e.name === 'AbortError' ? 'stopped' : e.message;
    } finally {
      running = null;
      $('stop').disabled = true;
      $('status').textContent = (state === 'done' ? 'done' : 'failed') + ' in ' + ((performance.now() - started) / 1000).toFixed(1) + ' s';
      document.body.dataset.state = state;
      refresh();
    }
  }

  async function copyCurl(ev) {
    ev.preventDefault();
    const text = $('curl').textContent;
    try {
      await navigator.clipboard.writeText(text);
      $('copy-curl').textContent = 'copied';
    } catch (_) {
      // No clipboard API (a page served over plain http elsewhere than
      // localhost): select the text for Ctrl+C.
      const range = document.createRange();
      range.selectNodeContents($('curl'));
      const sel = getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      $('copy-curl').textContent = 'selected';
    }
    setTimeout(() => { $('copy-curl').textContent = 'copy'; }, 1500);
  }

  async function init() {
    $('api-key').value = localStorage.getItem(keyStore) || '';
    const keyChanged = () => {
      localStorage.setItem(keyStore, $('api-key').value.trim());
      loadModels();
    };
    $('api-key').addEventListener('change', keyChanged);
    $('key-form').addEventListener('submit', (e) => {
      e.preventDefault();
      keyChanged();
    });
    for (const id of ['mode', 'schema', 'prompt', 'max-tokens', 'temperature', 'tool-name', 'strict', 'model', 'api-key']) $(id).addEventListener('input', refresh);
    $('example').addEventListener('change', pickExample);
    $('send').addEventListener('click', send);
    $('stop').addEventListener('click', () => running && running.abort());
    $('clear').addEventListener('click', () => $('chat').replaceChildren());
    $('copy-curl').addEventListener('click', copyCurl);
    $('prompt').addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) send();
    });
    try {
      const res = await fetch('/ui/examples.json');
      examples = await res.json();
    } catch (e) {
      $('server-status').textContent = 'examples: ' + e.message;
    }
    $('example').value = 'nested';
    pickExample();
    await loadModels();
    document.body.dataset.ready = 'true';
  }

  init();
})();
