"""Render testdata/NAME.jinja with testdata/NAME.input.json in transformers'
environment (jinja2 3.1) and write testdata/NAME.golden. Usage:
    python3 render_golden.py NAME...
"""
import json, os, sys
from datetime import datetime
import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.ext import loopcontrols

def raise_exception(m): raise jinja2.exceptions.TemplateError(m)
def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
env.globals["strftime_now"] = lambda f: datetime(2024, 7, 26).strftime(f)
here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for name in sys.argv[1:]:
    src = open(os.path.join(here, name + ".jinja"), newline="").read()
    inp = json.load(open(os.path.join(here, name + ".input.json")))
    out = env.from_string(src).render(messages=inp["messages"], tools=inp.get("tools"), documents=None,
        add_generation_prompt=inp.get("add_generation_prompt", False), bos_token=inp.get("bos_token", ""),
        eos_token=inp.get("eos_token", ""))
    open(os.path.join(here, name + ".golden"), "w", newline="").write(out)
