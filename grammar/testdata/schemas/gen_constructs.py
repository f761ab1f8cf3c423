# Writes constructs.jsonl: the schemas of TestRandomWalksValidateConstructs,
# at least 20 per construct this package enforces exactly beyond the basic
# keywords (the name's prefix up to "/" names the construct). Run:
#   python3 gen_constructs.py > constructs.jsonl
# Hand-written; nothing here is copied from elsewhere. Patterns avoid \s
# (the reference validator's regexp2 reads it as ASCII, ECMA-262 does not).
import json

S = []

def add(construct, name, schema):
    S.append({"name": construct + "/" + name, "schema": schema})

def string(p, **kw):
    d = {"type": "string", "pattern": p}
    d.update(kw)
    return d

# ^ and $ inside the pattern: in groups, alternatives, repeats.
anchors = [
    ("empty-or-words", r"^$|(^(?:[a-z]+ ){0,3}[a-z]+$)"),
    ("group-anchored", r"(^[0-9]+\.[0-9]+$)"),
    ("uuid-or-empty", r"(^$)|(^[a-f0-9]{4}-[a-f0-9]{4}$)"),
    ("end-in-alt", r"^([0-9x]+\.[0-9x]+$|%VERSION%)"),
    ("end-in-star", r"^(/?((\.{2})|([a-z0-9-]*))($|/))*$"),
    ("empty-key", r"^$[a-z$_]*$"),
    ("char-or-end", r"^([^,]|$)"),
    ("schemes", r"(^gs://(.+))|(^https?://(.+))"),
    ("end-then-char", r"a$b|^c"),
    ("begin-after-char", r"a^b|d$"),
    ("begin-or-char", r"(a|^)b"),
    ("end-or-char", r"(x|$)"),
    ("begin-x-end-y", r"(^|x)(y|$)"),
    ("star-of-anchored", r"(^a)*b$"),
    ("star-of-end", r"^(a$)*"),
    ("begin-or-a-star", r"(^|a)*$"),
    ("counted-begin", r"(^|a){2,3}b"),
    ("plus-mixed", r"((^)|(a$))+"),
    ("end-end", r"^[a-c]{2}$$"),
    ("nested-groups", r"^(((a|b)$)|c)"),
    ("dollar-begin", r"$^"),
]
for name, p in anchors:
    add("pattern-anchor", name, string(p))
add("pattern-anchor", "in-property", {"type": "object", "properties": {"v": string(r"(^[A-Z]{2}$)"), "w": string(r"^x|(y$)")}, "required": ["v"], "additionalProperties": False})
add("pattern-anchor", "in-items", {"type": "array", "items": string(r"(^$)|(^[0-9]{2}$)"), "maxItems": 4})
add("pattern-anchor", "pattern-properties", {"type": "object", "patternProperties": {r"(^x_[a-z]+$)": {"type": "integer"}}, "additionalProperties": False})
add("pattern-anchor", "with-length", string(r"^$|(^[a-z]+$)", maxLength=4))
add("pattern-anchor", "impossible-slash", {"type": "object", "properties": {"d": string(r"/^[0-9]{4}$/"), "e": {"type": "integer"}}, "additionalProperties": False})
add("pattern-anchor", "not", {"type": "string", "not": {"pattern": r"(^a)|(b$)"}})

# Lookaheads: top-level ones and ((?!X).)*.
looks = [
    ("not-contains", r"^((?!ab).)*$"),
    ("not-contains-either", r"^((?!a|bc).)+$"),
    ("every-position", r"^((?=[ab]).)*$"),
    ("not-b-at-end", r"^((?!b$).)*$"),
    ("not-prefix", r"^(?!ab|ba)"),
    ("not-prefix-class", r"^(?!aa)[a-c]*$"),
    ("pos-and-neg", r"^(?=[^=]+$)(?!x+$)(.|\n)+$"),
    ("anchor-in-look", r"^(?!^ab\.|bc\.).*"),
    ("path-then-ext", r"((?:[^/]*/)*)(?=\.(json|yml))"),
    ("not-anywhere", r"^(?!.*(\{a\}|\{b\}))"),
    ("case-prefix", r"^(?![i|I][o|O])"),
    ("after-literal", r"x(?=ab)"),
    ("unanchored-neg", r"(?!a)b"),
    ("two-positives", r"^(?=.*a)(?=.*b).{2,4}$"),
    ("neg-middle", r"^(?!a).(?!b)"),
    ("at-end", r"(?=a$)"),
    ("reserved-words", r"^(?!(if|else|for|while)$)[a-z]+$"),
    ("not-lucene", r"^(?!lucene\.|builtin\.).*"),
    ("no-double-dot", r"^((?!\.\.).)*$"),
    ("no-trailing-dash", r"^(?!.*-$)[a-z-]+$"),
    ("digit-somewhere", r"^(?=.*[0-9])[a-z0-9]{3,6}$"),
    ("neg-with-end", r"^(?![0-9]+$)[a-z0-9]+$"),
]
for name, p in looks:
    add("pattern-lookahead", name, string(p))
add("pattern-lookahead", "key-not-reserved", {"type": "object", "patternProperties": {r"^(?!type|id)[a-z]+$": {"type": "string"}}, "additionalProperties": False})
add("pattern-lookahead", "in-items", {"type": "array", "items": string(r"^((?!--).)*$", maxLength=6), "maxItems": 3})
add("pattern-lookahead", "not", {"type": "string", "not": {"pattern": r"^(?!a)"}})

# $ref by plain name ($anchor, or id / $id "#name" in drafts 04-07) and
# through the root's $id.
leaf_defs = [
    ("int", {"type": "integer", "minimum": -5, "maximum": 50}),
    ("str", {"type": "string", "maxLength": 3}),
    ("enum", {"enum": ["a", "b", 3]}),
    ("obj", {"type": "object", "properties": {"k": {"type": "boolean"}}, "required": ["k"], "additionalProperties": False}),
    ("arr", {"type": "array", "items": {"type": "null"}, "maxItems": 2}),
]
D4 = "http://json-schema.org/draft-04/schema#"
D7 = "http://json-schema.org/draft-07/schema#"
for name, leaf in leaf_defs:
    d = dict(leaf); d["$anchor"] = "t" + name
    add("ref-anchor", "anchor-" + name, {"$defs": {"x": d}, "type": "object", "properties": {"v": {"$ref": "#t" + name}}, "additionalProperties": False})
    d = dict(leaf); d["id"] = "#t" + name
    add("ref-anchor", "draft4-id-" + name, {"$schema": D4, "definitions": {"x": d}, "type": "array", "items": {"$ref": "#t" + name}, "maxItems": 3})
    d = dict(leaf); d["$id"] = "#t" + name
    add("ref-anchor", "draft7-id-" + name, {"$schema": D7, "definitions": {"x": d}, "anyOf": [{"$ref": "#t" + name}, {"type": "string", "enum": ["none"]}]})
    add("ref-anchor", "root-id-" + name, {"$id": "https://example.com/schemas/root.json", "$defs": {"x": leaf}, "type": "object",
        "properties": {"abs": {"$ref": "https://example.com/schemas/root.json#/$defs/x"}, "rel": {"$ref": "root.json#/$defs/x"}}, "additionalProperties": False})
add("ref-anchor", "recursive-tree", {"$defs": {"t": {"$anchor": "node", "type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#node"}, "maxItems": 2}, "n": {"type": "integer"}}, "additionalProperties": False}}, "$ref": "#node"})
add("ref-anchor", "root-anchor", {"$anchor": "top", "type": "object", "properties": {"self": {"$ref": "#top"}, "n": {"type": "null"}}, "additionalProperties": False})
add("ref-anchor", "root-id-anchor", {"$id": "https://example.com/a/b.json", "$defs": {"f": {"$anchor": "flag", "type": "boolean"}}, "type": "array", "items": {"$ref": "b.json#flag"}})

# propertyNames with any string schema: groups, $ref, not, enums, formats.
names = [
    ("pattern", {"pattern": "^[a-z]{1,4}$"}),
    ("maxLength", {"maxLength": 2}),
    ("minLength", {"minLength": 3, "maxLength": 5}),
    ("enum", {"enum": ["alpha", "beta", "gamma"]}),
    ("const", {"const": "only"}),
    ("oneOf", {"oneOf": [{"pattern": "^a"}, {"pattern": "b$"}]}),
    ("anyOf", {"anyOf": [{"enum": ["id", "name"]}, {"pattern": "^x-[a-z]+$"}]}),
    ("not-const", {"not": {"const": "secret"}}),
    ("not-pattern", {"not": {"pattern": "^_"}}),
    ("format-uuid", {"format": "uuid"}),
    ("format-date", {"format": "date"}),
    ("typed", {"type": "string", "pattern": "^[A-Z][a-z]*$"}),
    ("allOf", {"allOf": [{"pattern": "^[a-z_]+$"}, {"maxLength": 6}]}),
    ("lookahead", {"pattern": "^(?!x)[a-z]+$"}),
    ("false", False),
]
for name, pn in names:
    add("property-names", name, {"type": "object", "propertyNames": pn, "maxProperties": 3})
    add("property-names", name + "-values", {"type": "object", "propertyNames": pn, "additionalProperties": {"type": "integer", "minimum": 0}})
add("property-names", "ref", {"$defs": {"k": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 3}}, "type": "object", "propertyNames": {"$ref": "#/$defs/k"}})
add("property-names", "declared-filtered", {"type": "object", "properties": {"ok": {"type": "integer"}, "no_": {"type": "integer"}}, "propertyNames": {"pattern": "^[a-z]+$"}})
add("property-names", "with-pattern-properties", {"type": "object", "patternProperties": {"^n": {"type": "number"}}, "propertyNames": {"maxLength": 3}, "additionalProperties": {"type": "string"}})

# contains, minContains, maxContains.
cs = [
    ("const", {"const": 1}, {}),
    ("enum-str", {"enum": ["a", "b"]}, {"items": {"type": "string", "maxLength": 2}}),
    ("min2", {"type": "string"}, {"minContains": 2}),
    ("max1-int", {"const": 0}, {"items": {"type": "integer", "minimum": -3, "maximum": 3}, "maxContains": 1}),
    ("min0-max1", {"type": "null"}, {"minContains": 0, "maxContains": 1}),
    ("range-2-3", {"type": "integer", "minimum": 10}, {"items": {"type": "integer"}, "minContains": 2, "maxContains": 3}),
    ("with-maxItems", {"const": "x"}, {"minContains": 2, "maxItems": 4}),
    ("with-minItems", {"enum": [1, 2]}, {"items": {"type": "integer"}, "maxContains": 1, "minItems": 2, "maxItems": 5}),
    ("prefix", {"type": "string"}, {"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": {"type": ["integer", "string"]}, "maxContains": 2}),
    ("pattern", {"type": "string", "pattern": "^x"}, {"items": {"type": "string"}, "maxContains": 1}),
    ("object", {"type": "object", "required": ["id"]}, {"items": {"type": "object", "properties": {"id": {"type": "integer"}, "n": {"type": "string"}}, "additionalProperties": False}}),
    ("object-max", {"required": ["id"]}, {"items": {"type": "object", "properties": {"id": {"type": "integer"}, "n": {"type": "string"}}, "additionalProperties": False}, "maxContains": 1}),
    ("nested", {"type": "array", "contains": {"const": 42}}, {"items": {"type": "array", "items": {"type": "integer"}, "maxItems": 3}}),
    ("true-min", True, {"minContains": 2, "maxItems": 3}),
    ("false", False, {"minContains": 0, "maxContains": 0}),
    ("bool", {"const": True}, {"items": {"type": "boolean"}, "minContains": 1, "maxContains": 2}),
    ("num-range", {"type": "number", "minimum": 0, "maximum": 1}, {"items": {"type": "number"}, "minContains": 1}),
    ("length", {"type": "string", "minLength": 3}, {"items": {"type": "string"}, "maxContains": 1}),
    ("not-type", {"not": {"type": "string"}}, {"items": {"type": ["string", "integer"]}, "minContains": 1, "maxContains": 1}),
    ("anyOf", {"anyOf": [{"const": 1}, {"const": "one"}]}, {"items": {"type": ["integer", "string"]}, "maxContains": 2}),
]
for name, c, extra in cs:
    d = {"type": "array", "contains": c}
    d.update(extra)
    add("contains", name, d)
add("contains", "in-property", {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}, "contains": {"const": "type"}}}, "required": ["tags"], "additionalProperties": False})
add("contains", "draft7", {"$schema": "http://json-schema.org/draft-07/schema#", "type": "array", "contains": {"const": 1}, "minContains": 3})

# items negated (contains of the negation): not, oneOf and if/then/else
# over arrays, in draft 4 (a private contains), 7 and 2020-12.
item_pairs = [
    ("num-str", {"type": "number"}, {"type": "string"}),
    ("int-arr", {"type": "integer"}, {"type": "array", "items": {"type": "integer"}, "maxItems": 2}),
    ("enum", {"enum": ["a", "b"]}, {"enum": ["b", "c"]}),
    ("range", {"type": "integer", "maximum": 10}, {"type": "integer", "minimum": 5}),
    ("len", {"type": "string", "maxLength": 2}, {"type": "string", "minLength": 2}),
    ("null-bool", {"type": "null"}, {"type": ["null", "boolean"]}),
    ("obj", {"type": "object", "required": ["a"]}, {"type": "object", "properties": {"a": {"type": "integer"}}}),
]
for dname, d in [("d4", "http://json-schema.org/draft-04/schema#"), ("d7", "http://json-schema.org/draft-07/schema#"), ("d2020", None)]:
    for name, a, b in item_pairs:
        sch = {"oneOf": [{"type": "array", "items": a, "maxItems": 3}, {"type": "array", "items": b, "maxItems": 3}]}
        if d:
            sch["$schema"] = d
        add("items-negation", "oneOf-" + name + "-" + dname, sch)
for name, a, b in item_pairs[:4]:
    add("items-negation", "not-" + name, {"type": "array", "items": a, "maxItems": 3, "not": {"items": b}})
add("items-negation", "if-items", {"type": "array", "maxItems": 3, "if": {"items": {"type": "integer"}}, "then": {"minItems": 2}, "else": {"items": {"type": "string"}}})

for s in S:
    print(json.dumps(s, ensure_ascii=False))
