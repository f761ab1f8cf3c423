"""Generate random small Jinja templates, render them with jinja2 in
transformers' environment, and write [{template, vars, expected|error}] as
JSON for TestJinjaRandom (see reference_test.go). Usage:
    python3 random_templates.py SEED N OUT.json
"""
import copy, json, random, sys, warnings
warnings.simplefilter("ignore")
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

R = random.Random(int(sys.argv[1]))
VARS = {"s": "  Hello World  ", "n": 7, "f": 2.5, "z": 0, "b": True, "none": None, "e": "",
        "l": [3, 1, "x", None, [1, 2]], "ls": ["b", "A", "a", "c"], "d": {"k": "v", "a": 1, "items": [1]},
        "msgs": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [{"function": {"name": "f", "arguments": {"x": 1}}}]}, {"role": "user", "content": "bye\n"}],
        "u": "naïve ☕ 'q' \"dq\"\n\t"}
NAMES = list(VARS) + ["undef", "loop"]
WS = [" ", "  ", "\n", " \n  ", "\n\n", "\t", "", "x", "a b", "\n  x"]

def atom(d):
    r = R.random()
    if r < .35: return R.choice(NAMES)
    if r < .5: return repr(R.choice(["a", "b c", "", "x'y", 'q"', "\\n"])) if R.random() < .8 else '"%s"' % R.choice(["a", "it's", "\\t"])
    if r < .6: return str(R.choice([0, 1, 2, -1, 10, 3.5, 1.0]))
    if r < .65: return R.choice(["true", "false", "none", "True", "None"])
    if r < .7: return "[" + ", ".join(expr(d + 1) for _ in range(R.randint(0, 3))) + "]"
    if r < .75: return "{" + ", ".join("%r: %s" % (R.choice("abc"), expr(d + 1)) for _ in range(R.randint(0, 2))) + "}"
    if r < .8: return "(" + expr(d + 1) + ")"
    if r < .85: return "namespace(a=%s)" % expr(d + 1)
    return "range(%d)" % R.randint(0, 4)

def postfix(x, d):
    r = R.random()
    if r < .15: return x + "." + R.choice(["role", "content", "k", "a", "items", "keys", "strip", "upper", "x", "0"])
    if r < .3: return x + "[" + R.choice(["0", "-1", "1", "'k'", "'role'", "1:", ":-1", "::-1", "-2:", "'items'"]) + "]"
    if r < .4: return x + R.choice([".strip()", ".upper()", ".split()", ".split(' ')", ".startswith('H')", ".items()", ".get('k')", ".get('q', 5)", ".lstrip('\\n ')", ".title()", ".replace('l', 'L')", ".endswith('  ')", ".keys()", ".values()"])
    return x

FILTERS = ["length", "trim", "upper", "lower", "string", "list", "first", "last", "tojson", "tojson(indent=2)", "join(',')", "join",
           "default('D')", "default('D', true)", "items", "unique", "sort", "reverse", "map('string')", "map(attribute='role')",
           "selectattr('role', 'equalto', 'user')", "rejectattr('content')", "select", "reject('none')", "title", "capitalize",
           "int", "float", "abs", "round", "sum", "min", "max", "dictsort", "indent(2)", "replace('a', 'b')", "count", "center(9)",
           "wordcount", "trim('H ')", "batch(2)"[:0] or "e", "tojson(sort_keys=true)", "format(1)", "truncate(5)",
           "frob", "frob(1)"]  # frob: unknown, a compile-time error outside ifs and conditional expressions
TESTS = ["defined", "undefined", "none", "string", "number", "integer", "float", "mapping", "iterable", "sequence", "boolean",
         "true", "false", "odd", "even", "divisibleby 2", "equalto 7", "in [1, 7]", "callable", "lower", "upper", "sameas none",
         "frobbed"]  # unknown, as frob

def expr(d=0):
    x = expr1(d)
    return "(" + x + ")" if d > 0 and R.random() < .7 else x

def expr1(d=0):
    if d > 3: return atom(d)
    r = R.random()
    if r < .35: return postfix(atom(d), d)
    if r < .5: return expr(d + 1) + " | " + R.choice(FILTERS)
    if r < .6: return expr(d + 1) + " is " + R.choice(["", "not "]) + R.choice(TESTS)
    if r < .75: return expr(d + 1) + " " + R.choice(["+", "-", "*", "/", "//", "%", "~", "==", "!=", "<", ">=", "and", "or", "in", "not in", "**"]) + " " + expr(d + 1)
    if r < .8: return "not " + expr(d + 1)
    if r < .85: return "-" + atom(d)
    if r < .92: return "%s if %s else %s" % (expr(d + 1), expr(d + 1), expr(d + 1))
    return "%s if %s" % (expr(d + 1), expr(d + 1))

def tag(body):
    return "{%" + R.choice(["", "-", "+", "", ""]) + " " + body + " " + R.choice(["", "-", "", "+"]) + "%}"

def block(d=0):
    out = []
    for _ in range(R.randint(1, 4)):
        r = R.random()
        out.append(R.choice(WS))
        if r < .3 or d > 2:
            out.append("{{" + R.choice(["", "-"]) + " " + expr() + " " + R.choice(["", "-"]) + "}}")
        elif r < .45:
            out.append(tag("if " + expr(1)) + block(d + 1) + (tag("elif " + expr(1)) + block(d + 1) if R.random() < .3 else "") + (tag("else") + block(d + 1) if R.random() < .4 else "") + tag("endif"))
        elif r < .6:
            tgt = R.choice(["x", "x", "k, v", "m"])
            it = R.choice(["l", "ls", "msgs", "d", "d|items", "range(3)", "s", "none", "undef", "msgs[::-1]", expr()])
            cond = " if " + expr(1) if R.random() < .2 else ""
            inner = block(d + 1)
            if R.random() < .3: inner += tag(R.choice(["if loop.first", "if x", "if loop.index0 > 0"])) + tag(R.choice(["break", "continue"])) + tag("endif")
            if R.random() < .5: inner += "{{ loop.index }}{{ loop.last }}{{ loop.previtem }}|{{ loop.nextitem }}|{{ loop.revindex }}"
            out.append(tag("for %s in %s%s" % (tgt, it, cond)) + inner + (tag("else") + block(d + 1) if R.random() < .2 else "") + tag("endfor"))
        elif r < .7:
            out.append(tag("set %s = %s" % (R.choice(["x", "s", "n", "y"]), expr())))
        elif r < .75:
            out.append(tag("set ns = namespace(c=0)") + tag("for i in l") + tag("set ns.c = ns.c + 1") + tag("endfor") + "{{ ns.c }}")
        elif r < .8:
            out.append(tag("set y") + block(d + 1) + tag("endset") + "{{ y|trim }}")
        elif r < .85:
            out.append("{#" + R.choice(["", "-"]) + " c " + R.choice(["", "-"]) + "#}")
        elif r < .9:
            out.append(tag("macro m(a, b=2)") + block(d + 1) + "{{ a }}{{ b }}" + tag("endmacro") + "{{ m(" + expr() + ") }}")
        elif r < .95:
            out.append("{{ raise_exception('boom ' ~ %s) }}" % expr() if R.random() < .2 else "{{ strftime_now('%d %b %Y %H') }}")
        else:
            out.append("{% raw %}{{ x }}{% endraw %}")
    return "".join(out)

VARS_JSON = json.dumps(VARS, ensure_ascii=False)
cases = []
for i in range(int(sys.argv[2])):
    src = block() + R.choice(["", "\n", "\n\n", " "])
    c = {"name": "t%d" % i, "template": src}
    try:
        # deepcopy: jinja2's indent filter does s += "\n", which extends a list in place
        c["expected"] = env.from_string(src).render(**copy.deepcopy(VARS))
    except jinja2.exceptions.TemplateSyntaxError as e:
        c["error"] = "syntax: " + str(e); c["error_kind"] = "syntax"
    except jinja2.exceptions.TemplateError as e:
        if type(e) is jinja2.exceptions.TemplateError:
            c["error"] = str(e.message); c["error_kind"] = "raise_exception"
        else:
            c["error"] = "%s: %s" % (type(e).__name__, e); c["error_kind"] = "runtime"
    except Exception as e:
        c["error"] = "%s: %s" % (type(e).__name__, e); c["error_kind"] = "runtime"
    cases.append(c)
json.dump({"vars": json.loads(VARS_JSON), "cases": cases}, open(sys.argv[3], "w"), ensure_ascii=False)

