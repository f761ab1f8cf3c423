import json, random, sys, glob, os
from datetime import datetime
import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.ext import loopcontrols, Extension
from jinja2 import nodes

class Gen(Extension):
    tags = {"generation"}
    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(self.call_method("_r", []), [], [], body).set_lineno(lineno)
    def _r(self, caller):
        return caller()

class TE(Exception): pass
def raise_exception(m): raise jinja2.exceptions.TemplateError(m)
def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
NOW = datetime(2024,7,26)
env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[Gen, loopcontrols])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
env.globals["strftime_now"] = lambda f: NOW.strftime(f)

R = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
TEXTS = ["Hello", "  padded  ", "line1\nline2", "", "naïve café ☕ 😀", "quote ' and \" both", "it's", 'say "hi"',
         "tab\there", "back\\slash", "<tool_response>x</tool_response>", "<think>\nreason\n</think>\n\nanswer",
         "a</think>b", "\n\nlead", "trail\n\n", "{\"json\": 1}", "\u2028sep\u2029", "ctrl\x01\x7f", "   ", "日本語"]
def text(): return R.choice(TEXTS) if R.random() < .8 else "".join(R.choice(TEXTS) for _ in range(R.randint(1,3)))
def scalar():
    return R.choice([text(), R.randint(-5, 100), R.choice([0.5, 21.5, 1.0, -3.25, 1e-7, 1e16, 12345678.9]), True, False, None])
def jval(d=0):
    r = R.random()
    if d < 2 and r < .2: return [jval(d+1) for _ in range(R.randint(0,3))]
    if d < 2 and r < .4: return {R.choice(["city","unit","n","ok","list","z","a","ü"]): jval(d+1) for _ in range(R.randint(0,3))}
    return scalar()
def args():
    d = {}
    for _ in range(R.randint(0,3)): d[R.choice(["city","unit","days","query","opts","zeta","alpha"])] = jval(1)
    return d
IDS = ["call_abc123456", "9fa3bc12d", "short", "call_xyz987654321"]
def tool_call():
    a = args()
    if R.random() < .25: a = json.dumps(a)
    tc = {"id": R.choice(IDS), "type": "function", "function": {"name": R.choice(["get_weather","search","calc"]), "arguments": a}}
    if R.random() < .1: tc = tc["function"]
    return tc
def content():
    r = R.random()
    if r < .05: return R.choice([5, 2.5, True, {"content": text()}, {"text": text()}, [], {}])
    if r < .75: return text()
    if r < .85: return [{"type": "text", "text": text()} for _ in range(R.randint(1,2))]
    if r < .9: return [{"type": "image"}, {"type": "text", "text": text()}]
    return None
def msg(role):
    m = {"role": role}
    if role == "assistant" and R.random() < .35:
        m["content"] = R.choice([None, "", text()])
        m["tool_calls"] = [tool_call() for _ in range(R.choice([1,1,1,2,3,0]))]
    elif role == "tool":
        m["content"] = R.choice([text(), json.dumps(args()), text()])
        if R.random() < .8: m["tool_call_id"] = R.choice(IDS)
        if R.random() < .8: m["name"] = R.choice(["get_weather","search"])
    else:
        m["content"] = content()
    if role == "assistant" and R.random() < .15: m["reasoning_content"] = R.choice([None, text()])
    if R.random() < .05: m[R.choice(["items", "keys", "values", "get", "name", "tool_calls", "extra"])] = R.choice([None, [], text(), 3])
    if R.random() < .02: del m["role"]
    return m
def conv():
    ms = []
    if R.random() < .4: ms.append(msg("system"))
    n = R.randint(0, 6)
    role = "user"
    for i in range(n):
        if R.random() < .1: role = R.choice(["user","assistant","tool","system","ipython","tool_results","developer"])
        ms.append(msg(role))
        role = {"ipython": "assistant", "tool_results": "assistant", "developer": "user", "user": "assistant", "assistant": R.choice(["user","tool"]), "tool": R.choice(["tool","assistant","user"]), "system": "user"}[role]
    if not ms or R.random() < .9 and ms[0].get("role") not in ("user", "system"): ms.insert(0, msg("user"))
    return ms
def tool():
    props = {}
    for _ in range(R.randint(0, 3)):
        t = R.choice(["string","number","integer","boolean","array","object",["string","null"], None])
        p = {"description": text()} if R.random() < .8 else {}
        if t is not None: p["type"] = t
        if t == "array": p["items"] = {"type": R.choice(["string","integer"])}
        if t == "object" and R.random() < .5: p["additionalProperties"] = {"type": "number"}
        if R.random() < .3: p["enum"] = ["c", "f"]
        props[R.choice(["city","unit","days","q","x_y"])] = p
    f = {"name": R.choice(["get_weather","search","calc"]), "description": text(), "parameters": {"type": "object", "properties": props, "required": list(props)[:1]}}
    if R.random() < .2: f["return"] = {"type": "string", "description": text()}
    return {"type": "function", "function": f} if R.random() < .9 else f

tdir = "/work/shared/templates"
out = []
for path in sorted(glob.glob(tdir + "/golden/*.json")):
    fx = json.load(open(path))
    src = open(os.path.join(tdir, fx["template"])).read()
    t = env.from_string(src)
    cases = []
    for i in range(int(sys.argv[2]) if len(sys.argv) > 2 else 50):
        ms = conv()
        tools = [tool() for _ in range(R.randint(1,2))] if R.random() < .5 else R.choice([None, None, None, []])
        agp = R.random() < .5
        extra = {}
        if R.random() < .2: extra["enable_thinking"] = R.choice([True, False])
        if R.random() < .2: extra["tools_in_user_message"] = R.choice([True, False])
        if R.random() < .1: extra["date_string"] = R.choice(["01 Jan 2025", ""])
        if R.random() < .1: extra["custom_tools"] = [tool()]
        if R.random() < .05: extra["documents"] = [{"title": "t", "text": text()}]
        c = {"name": f"r{i}", "messages": ms, "tools": tools, "add_generation_prompt": agp, "extra_vars": extra}
        try:
            kw = dict(messages=ms, tools=tools, documents=None, add_generation_prompt=agp, bos_token=fx["bos_token"], eos_token=fx["eos_token"])
            kw.update(extra)
            c["expected"] = t.render(**kw)
        except jinja2.exceptions.TemplateError as e:
            if type(e) is jinja2.exceptions.TemplateError:
                c["error"] = e.message; c["error_kind"] = "raise_exception"
            else:
                c["error"] = str(e); c["error_kind"] = "runtime"
        except Exception as e:
            c["error"] = f"{type(e).__name__}: {e}"; c["error_kind"] = "runtime"
        cases.append(c)
    fx["cases"] = cases
    out.append(fx)
json.dump(out, open(sys.argv[3] if len(sys.argv) > 3 else "/tmp/dt/cases.json", "w"), ensure_ascii=False)
