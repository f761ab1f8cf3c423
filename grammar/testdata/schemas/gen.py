# gen.py writes corpus.jsonl: the varied schemas of the property test
# (TestRandomWalksValidate). Run: python3 gen.py > corpus.jsonl
# Each line is {"name": ..., "schema": ...}. Hand-written building blocks
# are combined so that every keyword appears alone and next to others.
import json, itertools

leaves = {
    "null": {"type": "null"},
    "bool": {"type": "boolean"},
    "int": {"type": "integer"},
    "num": {"type": "number"},
    "str": {"type": "string"},
    "int-range": {"type": "integer", "minimum": -20, "maximum": 305},
    "int-excl": {"type": "integer", "exclusiveMinimum": 3, "exclusiveMaximum": 1000},
    "int-big": {"type": "integer", "minimum": 1000000, "maximum": 123456789012},
    "int-neg": {"type": "integer", "maximum": -7},
    "int-min": {"type": "integer", "minimum": 42},
    "num-range": {"type": "number", "minimum": -2.5, "maximum": 7.125},
    "num-excl": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.5},
    "num-min": {"type": "number", "minimum": 0.001},
    "num-max": {"type": "number", "exclusiveMaximum": -1.75},
    "mult5": {"type": "integer", "multipleOf": 5},
    "mult3-range": {"type": "integer", "multipleOf": 3, "minimum": -30, "maximum": 60},
    "mult-cent": {"type": "number", "multipleOf": 0.01, "minimum": 0, "maximum": 100},
    "str-len": {"type": "string", "minLength": 2, "maxLength": 5},
    "str-min": {"type": "string", "minLength": 3},
    "str-max": {"type": "string", "maxLength": 1},
    "date": {"type": "string", "format": "date"},
    "time": {"type": "string", "format": "time"},
    "date-time": {"type": "string", "format": "date-time"},
    "duration": {"type": "string", "format": "duration"},
    "email": {"type": "string", "format": "email"},
    "hostname": {"type": "string", "format": "hostname"},
    "ipv4": {"type": "string", "format": "ipv4"},
    "ipv6": {"type": "string", "format": "ipv6"},
    "uuid": {"type": "string", "format": "uuid"},
    "uri": {"type": "string", "format": "uri"},
    "enum-str": {"enum": ["red", "green", "blue", "gr\"ey", "naïve", "line\nbreak"]},
    "enum-mixed": {"enum": [1, "one", None, True, 2.5, [1, 2], {"a": 1}]},
    "const": {"const": "fixed"},
    "const-obj": {"const": {"k": [1, {"z": None}]}},
    "nullable-str": {"type": ["string", "null"], "maxLength": 3},
    "any": {},
    "true": True,
    "not-str": {"not": {"type": "string"}},
    "not-enum": {"type": "string", "maxLength": 2, "not": {"enum": ["a", "b"]}},
    "not-len": {"type": "string", "not": {"minLength": 3}},
    "int-or-str": {"type": ["integer", "string"], "minimum": 0, "maxLength": 2},
}

out = []
def add(name, schema):
    out.append({"name": name, "schema": schema})

for k, v in leaves.items():
    add("leaf-" + k, v)

keys = list(leaves)
# Arrays of each leaf with several count bounds.
for i, k in enumerate(keys):
    bounds = [{}, {"minItems": 1}, {"maxItems": 2}, {"minItems": 2, "maxItems": 4}][i % 4]
    s = {"type": "array", "items": leaves[k]}
    s.update(bounds)
    add("array-" + k, s)

# Objects mixing leaves, required sets and additionalProperties.
for i in range(60):
    ks = [keys[(i * 7 + j * 3) % len(keys)] for j in range(1 + i % 5)]
    props = {f"p{j}_{k}": leaves[k] for j, k in enumerate(ks)}
    names = list(props)
    req = [n for j, n in enumerate(names) if (i + j) % 3 == 0]
    s = {"type": "object", "properties": props}
    if req:
        s["required"] = req
    ap = [False, None, {"type": "integer"}, True][i % 4]
    if ap is not None:
        s["additionalProperties"] = ap
    if i % 11 == 5:
        s["minProperties"] = 1
    if i % 13 == 6:
        s["maxProperties"] = 2
        s["additionalProperties"] = False
    add(f"object-{i}", s)

# Tuples.
for i in range(10):
    ks = [keys[(i * 5 + j) % len(keys)] for j in range(1 + i % 3)]
    s = {"type": "array", "prefixItems": [leaves[k] for k in ks]}
    if i % 2 == 0:
        s["items"] = False
    else:
        s["items"] = leaves[keys[i]]
        s["maxItems"] = len(ks) + 2
    if i % 3 == 0:
        s["minItems"] = len(ks)
    add(f"tuple-{i}", s)
add("tuple-draft7", {"$schema": "http://json-schema.org/draft-07/schema#", "type": "array", "items": [{"type": "string"}, {"type": "integer"}], "additionalItems": {"type": "boolean"}})
add("draft4-excl", {"$schema": "http://json-schema.org/draft-04/schema#", "type": "number", "minimum": 1, "exclusiveMinimum": True, "maximum": 3, "exclusiveMaximum": True})

# anyOf / oneOf / allOf.
for i in range(25):
    a, b, c = keys[i % len(keys)], keys[(i * 3 + 1) % len(keys)], keys[(i * 5 + 2) % len(keys)]
    add(f"anyOf-{i}", {"anyOf": [leaves[a], leaves[b], leaves[c]]})
types = ["null", "bool", "int", "str", "array-int", "object"]
for i, (x, y) in enumerate(itertools.combinations(["null", "bool", "int-range", "str-len", "date"], 2)):
    if leaves[x].get("type") == leaves[y].get("type"):
        continue
    add(f"oneOf-types-{i}", {"oneOf": [leaves[x], leaves[y]]})
for i in range(8):
    add(f"oneOf-disc-{i}", {"oneOf": [
        {"type": "object", "properties": {"kind": {"const": "circle"}, "r": leaves[keys[i]]}, "required": ["kind", "r"], "additionalProperties": False},
        {"type": "object", "properties": {"kind": {"enum": ["square", "box"]}, "side": leaves[keys[i + 3]]}, "required": ["kind"], "additionalProperties": False},
    ]})
for i in range(12):
    add(f"allOf-{i}", {"allOf": [
        {"type": "object", "properties": {"a": leaves[keys[i]]}, "required": ["a"]},
        {"properties": {"b": leaves[keys[i + 10]], "a": {}}, "required": ["b"] if i % 2 else []},
    ]} if i % 3 else {"allOf": [{"type": "object", "properties": {"a": leaves[keys[i]]}, "required": ["a"]}, {"properties": {"b": leaves[keys[i + 10]]}}]})
add("allOf-bounds", {"allOf": [{"type": "integer", "minimum": 0}, {"maximum": 50}, {"multipleOf": 10}]})
add("allOf-strings", {"allOf": [{"type": "string", "minLength": 1}, {"maxLength": 9}, {"format": "ipv4"}]})

# $ref and recursion.
add("ref-defs", {"$defs": {"pt": {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"], "additionalProperties": False}},
                 "type": "array", "items": {"$ref": "#/$defs/pt"}, "maxItems": 3})
add("ref-definitions", {"definitions": {"s": {"type": "string", "maxLength": 4}}, "type": "object", "properties": {"a": {"$ref": "#/definitions/s"}, "b": {"$ref": "#/definitions/s"}}, "additionalProperties": False})
add("ref-siblings", {"$defs": {"n": {"type": "integer"}}, "$ref": "#/$defs/n", "minimum": 3, "maximum": 9})
add("ref-list", {"$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"}, "next": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/node"}]}}, "required": ["v", "next"], "additionalProperties": False}}, "$ref": "#/$defs/node"})
add("ref-tree", {"type": "object", "properties": {"name": {"type": "string", "maxLength": 3}, "children": {"type": "array", "items": {"$ref": "#"}, "maxItems": 2}}, "required": ["name"], "additionalProperties": False})
add("ref-escaped", {"$defs": {"a/b": {"type": "null"}, "p%q": {"type": "boolean"}}, "type": "array", "prefixItems": [{"$ref": "#/$defs/a~1b"}, {"$ref": "#/$defs/p%25q"}], "items": False})

# Nested realistic shapes.
add("nested-1", {"type": "object", "properties": {
    "user": {"type": "object", "properties": {"id": {"type": "integer", "minimum": 1}, "email": {"type": "string", "format": "email"}, "tags": {"type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 3}}, "required": ["id"]},
    "created": {"type": "string", "format": "date-time"},
    "status": {"enum": ["active", "inactive", "banned"]}},
    "required": ["user", "status"], "additionalProperties": False})
add("nested-2", {"type": "array", "items": {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9}, "minItems": 1, "maxItems": 3}, "maxItems": 3})
add("nested-3", {"type": "object", "properties": {"meta": {}, "data": {"type": "object", "additionalProperties": {"type": "number"}}}})
add("nested-4", {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "boolean"}}, "maxProperties": 3})
add("nested-5", {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "object", "properties": {"c": {"type": "string", "pattern_absent": 1}}}}}}})
add("propertyNames", {"type": "object", "propertyNames": {"maxLength": 3}, "additionalProperties": {"type": "integer"}})
add("propertyNames-enum", {"type": "object", "propertyNames": {"enum": ["a", "bb"]}, "properties": {"a": {"type": "integer"}, "zz": {"type": "integer"}}})
add("unevaluated-false", {"type": "object", "properties": {"a": {"type": "integer"}}, "unevaluatedProperties": False})
add("string-escapes", {"type": "string", "enum": ["\u0000", "\t", "\\", "/", "😀", "é"]})

add("pattern-anchored", {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3}$"})
add("pattern-search", {"type": "string", "pattern": "ab+c", "maxLength": 8})
add("pattern-unicode", {"type": "string", "pattern": "^\\p{L}+$"})
add("pattern-dot", {"type": "string", "pattern": "^.{2,4}$"})
add("patternProperties", {"type": "object", "patternProperties": {"^x-": {"type": "integer"}, "^y": {"type": "string", "maxLength": 2}}, "additionalProperties": False})
add("patternProperties-extras", {"type": "object", "properties": {"id": {"type": "integer"}}, "patternProperties": {"_n$": {"type": "number"}}, "additionalProperties": {"type": "boolean"}})
add("not-pattern", {"type": "string", "not": {"pattern": "^a"}})

for o in out:
    print(json.dumps(o, ensure_ascii=False))
