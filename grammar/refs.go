package grammar

import (
	"net/url"
	"strconv"
	"strings"
)

// Plain-name and $id-relative references. A $ref is resolved as a local
// JSON Pointer (resolvePointer); two other spellings that name a place in
// the same document are rewritten into pointers once, before compiling,
// so that every later step (and the finite-domain validator, which sees
// the rewritten document) reads pointers only:
//
//   - "#name", a plain-name fragment: the subschema with "$anchor": "name"
//     (2019-09 and later), or with "$id": "#name" / "id": "#name" (drafts
//     04 to 07, which spell anchors as fragment-only ids);
//   - a URI that resolves, against the root's $id (or id), to the root
//     itself with a fragment ("schema.json#/definitions/a", or the whole
//     absolute URI).
//
// Both are exact only while the document is one resource: an embedded
// schema with an $id of its own changes the base URI, and the names and
// relative URIs under it resolve against that base instead. Such
// documents are left alone (their $refs stay what they are, and are
// refused as bad-ref if not pointers). A name defined twice is left
// alone too (it is an invalid schema). Values of enum, const, default and
// examples are data, not schemas: an "$anchor" member there defines
// nothing.

// dataKeywords hold JSON data rather than subschemas.
var dataKeywords = map[string]bool{"enum": true, "const": true, "default": true, "examples": true, "example": true}

// resolveNamedRefs rewrites the plain-name and root-relative $refs of the
// document rooted at root into JSON Pointers (see above).
func resolveNamedRefs(root *value) {
	anchors := map[string]string{} // name → pointer of the subschema
	dups := map[string]bool{}      // names defined more than once
	nested := false                // an embedded resource changes the base URI
	var refs []*value              // the objects holding a string $ref
	var walk func(v *value, ptr string, depth int)
	walk = func(v *value, ptr string, depth int) {
		if depth > 512 {
			return
		}
		switch v.k {
		case kArray:
			for i, e := range v.arr {
				walk(e, ptr+"/"+strconv.Itoa(i), depth+1)
			}
			return
		case kObject:
		default:
			return
		}
		for i, k := range v.keys {
			x := v.vals[i]
			switch {
			case dataKeywords[k]:
				continue
			case x.k == kString && (k == "$anchor" || (k == "$id" || k == "id") && strings.HasPrefix(x.str, "#")):
				name := x.str
				if k != "$anchor" {
					name = name[1:]
				}
				if name == "" {
					continue // "#": the document itself, not an anchor
				}
				if _, dup := anchors[name]; dup {
					dups[name] = true
				}
				anchors[name] = ptr
				continue
			case x.k == kString && (k == "$id" || k == "id") && ptr != "":
				nested = true
				continue
			case x.k == kString && k == "$ref":
				refs = append(refs, v)
				continue
			}
			walk(x, ptr+"/"+escapePointer(k), depth+1)
		}
	}
	walk(root, "", 0)
	if nested || len(refs) == 0 {
		return
	}
	for name := range dups {
		delete(anchors, name)
	}
	var base *url.URL
	for _, k := range []string{"$id", "id"} {
		if id := root.get(k); id != nil && id.k == kString && !strings.HasPrefix(id.str, "#") {
			if u, err := url.Parse(id.str); err == nil && u.IsAbs() {
				base = u
			}
			break
		}
	}
	for _, v := range refs {
		for i, k := range v.keys {
			if k != "$ref" || v.vals[i].k != kString {
				continue
			}
			if p, ok := localRef(v.vals[i].str, base, anchors); ok {
				v.vals[i] = &value{k: kString, str: p}
			}
		}
	}
}

// localRef returns the pointer form ("#/...") of ref when ref names a
// place in this document by anchor or through the root's base URI.
func localRef(ref string, base *url.URL, anchors map[string]string) (string, bool) {
	if strings.HasPrefix(ref, "#/") || ref == "#" {
		return "", false // already a pointer
	}
	frag, ok := "", false
	if strings.HasPrefix(ref, "#") {
		frag, ok = ref[1:], true
	} else if base != nil {
		u, err := url.Parse(ref)
		if err != nil {
			return "", false
		}
		r := base.ResolveReference(u)
		b := *base
		b.Fragment, b.RawFragment = "", ""
		f := r.EscapedFragment()
		r.Fragment, r.RawFragment = "", ""
		if r.String() != b.String() {
			return "", false
		}
		frag, ok = f, true
	}
	if !ok {
		return "", false
	}
	if frag == "" || strings.HasPrefix(frag, "/") {
		return "#" + frag, true
	}
	name, err := url.PathUnescape(frag)
	if err != nil {
		return "", false
	}
	p, found := anchors[name]
	if !found {
		return "", false
	}
	// resolvePointer unescapes %XX before reading the pointer.
	return "#" + strings.ReplaceAll(p, "%", "%25"), true
}

// refOverridesSiblings reports whether the document declares a draft from
// 3 to 7, where an object with "$ref" is the reference alone: "All other
// properties in a "$ref" object MUST be ignored" (draft-07 Core §8.3; the
// siblings apply from 2019-09 on, and in documents that declare no draft,
// which this package reads as 2020-12).
func refOverridesSiblings(root *value) bool {
	s := root.get("$schema")
	return s != nil && s.k == kString && strings.Contains(s.str, "json-schema.org/draft-0")
}

// refOnly returns the schema object that stands for v where siblings of
// "$ref" are ignored (alone): v itself, or v reduced to its "$ref" member.
// Definitions beside the $ref stay reachable, since JSON Pointers resolve
// against the document, not against this view.
func refOnly(v *value, alone bool) *value {
	if !alone || v.k != kObject {
		return v
	}
	r := v.get("$ref")
	if r == nil || r.k != kString || len(v.keys) == 1 {
		return v
	}
	return object("$ref", r)
}
