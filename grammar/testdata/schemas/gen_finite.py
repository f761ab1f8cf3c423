# Writes finite.jsonl (the finite-domain / oneOf / if-then-else corpus of
# TestRandomWalksValidateFinite): python3 gen_finite.py > finite.jsonl
# Hand-written; nothing here is copied from elsewhere.
import json
null, true, false = None, True, False
S=[
("fin-notnot-items", {"allOf":[{"enum":[[1,2,3,4,5],[1,"a"],"x"]},{"not":{"not":{"items":{"type":"integer"}}}}]}),
("fin-notnot-props", {"allOf":[{"enum":[{"bar":2,"foo":1},{"bar":"x"},{"foo":"y"},3]},{"not":{"not":{"properties":{"bar":{"type":"integer"}}}}}]}),
("fin-not-required-all", {"enum":[{"a":1},{"a":1,"b":2},{"b":2},{}],"not":{"required":["a","b"]}}),
("fin-not-object", {"enum":[{"a":1},{"a":"s"},[1],null],"not":{"type":"object","properties":{"a":{"type":"integer"}}}}),
("fin-uniqueItems", {"type":"array","enum":[[1,1],[1,2],[2,2,3],[3,4,5],[]],"uniqueItems":true}),
("fin-uniqueItems-prop", {"type":"object","properties":{"tags":{"enum":[["a","b"],["a","a"],["c"]],"uniqueItems":true}},"required":["tags"],"additionalProperties":false}),
("fin-multipleOf", {"enum":[0.3,0.6,0.7,1.2,5],"multipleOf":0.3}),
("fin-oneOf-inside", {"enum":[1,2,3,4,"a"],"oneOf":[{"type":"integer","minimum":2},{"type":"integer","maximum":3}]}),
("fin-contains-like-not", {"enum":[[1,2],[3],[2,2]],"not":{"items":{"not":{"const":2}}}}),
("fin-propertyNames-not", {"enum":[{"ab":1},{"abc":1},{"x":2}],"not":{"propertyNames":{"maxLength":2}}}),
("fin-dependencies-not", {"enum":[{"a":1,"b":2},{"a":1},{"c":3}],"not":{"dependentRequired":{"a":["b"]}}}),
("fin-nested-ref", {"$defs":{"e":{"enum":[[1,2],[2,1],[1,1]]}},"type":"object","properties":{"v":{"$ref":"#/$defs/e","not":{"items":{"const":2}}}},"required":["v"],"additionalProperties":false}),
("fin-draft7", {"$schema":"http://json-schema.org/draft-07/schema#","enum":[[1],[1,"x"],[2,3]],"not":{"items":[{"const":1}],"additionalItems":false}}),
("fin-empty-survivors-alt", {"anyOf":[{"enum":[[1,1]],"uniqueItems":true},{"type":"string","maxLength":2}]}),
("xor-two", {"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"number"}},"oneOf":[{"required":["a"]},{"required":["b"]}]}),
("xor-closed", {"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"additionalProperties":false,"oneOf":[{"required":["a"]},{"required":["b"]}]}),
("xor-three", {"type":"object","properties":{"radius":{"type":"number"},"length":{"type":"number"},"width":{"type":"number"},"base":{"type":"number"},"height":{"type":"number"}},"additionalProperties":false,"oneOf":[{"required":["radius"]},{"required":["length","width"]},{"required":["base","height"]}]}),
("xor-untyped", {"oneOf":[{"required":["a"]},{"required":["b"]}]}),
("xor-typed-branch", {"oneOf":[{"type":"object","required":["a"]},{"required":["b"]}],"properties":{"a":{"type":"null"},"b":{"type":"null"}},"additionalProperties":false}),
("xor-not-required", {"type":"object","additionalProperties":false,"properties":{"x":{"type":"string"},"y":{"type":"string"}},"oneOf":[{"not":{"required":["x"]},"required":["y"]},{"not":{"required":["y"]},"required":["x"]}]}),
("xor-subset", {"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"additionalProperties":false,"oneOf":[{"required":["a"]},{"required":["a","b"]}]}),
("xor-empty-branch", {"type":"object","properties":{"a":{"type":"boolean"},"b":{"type":"boolean"}},"additionalProperties":false,"oneOf":[{},{"required":["a","b"]}]}),
("xor-nested-prop", {"type":"object","properties":{"dims":{"type":"object","properties":{"w":{"type":"integer"},"h":{"type":"integer"},"r":{"type":"integer"}},"additionalProperties":false,"oneOf":[{"required":["w","h"]},{"required":["r"]}]}},"required":["dims"],"additionalProperties":false}),
("fin1-string-pattern", {"oneOf":[{"type":"string","pattern":"^[a-z]+$"},{"type":"string","enum":["warn","error","X"]}]}),
("fin1-date-time", {"oneOf":[{"type":"string","format":"date-time"},{"enum":["template","first"]}]}),
("fin1-integer", {"oneOf":[{"type":"integer","minimum":0,"maximum":50},{"enum":[1,2,"a",null,100]}]}),
("fin1-bool-null", {"oneOf":[{"type":["boolean","null"]},{"const":true}]}),
("fin1-two-finite", {"oneOf":[{"enum":["a","b","c"]},{"enum":["b","c","d"]},{"type":"integer"}]}),
("fin1-ref", {"$defs":{"jinja":{"type":"string","pattern":"\\{\\{.*\\}\\}"}},"oneOf":[{"$ref":"#/$defs/jinja"},{"type":"string","enum":["warn","error","{{x}}"]}]}),
("fin1-object-finite", {"oneOf":[{"type":"string","maxLength":3},{"enum":[{"k":1},"abc","abcd"]}]}),
("if-discriminator", {"type":"object","properties":{"kind":{"enum":["a","b"]},"x":{"type":"integer"},"y":{"type":"string"}},"required":["kind"],"additionalProperties":false,"if":{"properties":{"kind":{"const":"a"}}},"then":{"required":["x"]},"else":{"required":["y"]}}),
("if-required", {"if":{"required":["x"]},"then":{"not":{"required":["error"]}},"else":{"required":["error"]}}),
("if-const-no-else", {"type":"string","if":{"const":"x"},"then":false}),
("if-typed-else-only", {"if":{"type":"string"},"else":{"type":"integer"}}),
("if-minItems-finite", {"type":"array","oneOf":[{"$ref":"#/definitions/x"},{"$ref":"#/definitions/y"}],"if":{"minItems":1},"then":{"minItems":2,"items":{"multipleOf":2}},"else":{"minItems":1},"definitions":{"x":{"enum":[[2],[2,4],[6]]},"y":{"enum":[[],[2,3],[4,8]]}}}),
("if-nested-property", {"type":"object","properties":{"mode":{"type":"string"},"n":{"type":"integer"}},"additionalProperties":false,"if":{"properties":{"mode":{"type":"string","maxLength":1}},"required":["mode"]},"then":{"required":["n"]}}),
("if-allOf-two", {"type":"object","properties":{"t":{"enum":["a","b","c"]},"a":{"type":"string"},"b":{"type":"integer"}},"required":["t"],"additionalProperties":false,"allOf":[{"if":{"properties":{"t":{"const":"a"}}},"then":{"required":["a"]}},{"if":{"properties":{"t":{"const":"b"}}},"then":{"required":["b"]},"else":{"not":{"required":["b"]}}}]}),
("if-pattern", {"type":"string","if":{"pattern":"^x"},"then":{"maxLength":3},"else":{"minLength":2}}),
("if-maxProperties", {"type":"object","properties":{"p":{"type":"integer"},"q":{"type":"integer"}},"additionalProperties":false,"if":{"maxProperties":1},"then":{"required":["p"]}})
]
for n,s in S:
    print(json.dumps({"name":n,"schema":s}))
