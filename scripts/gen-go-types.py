#!/usr/bin/env python3
"""Generates src/apiserver/api/go_types_generated.inc: tables of the Go API types of the built-in
kinds (field JSON names, protobuf numbers, Go types, presence rules), read from upstream types.go.

The tables are schema data; the API server's protobuf decoder and its strict JSON checker walk them
(src/apiserver/api/go_types.h). To regenerate, lay out the upstream sources of one release under a
directory and run the script over it:

  SRC=/tmp/gosrc  # tag v0.34.2 of each repository
  for g in apps/v1 core/v1 discovery/v1 coordination/v1 events/v1 policy/v1 rbac/v1 autoscaling/v1; do
    mkdir -p $SRC/api/$g && git -C kubernetes/api show v0.34.2:$g/types.go > $SRC/api/$g/types.go
  done
  for p in pkg/apis/meta/v1/types.go pkg/util/intstr/intstr.go pkg/runtime/types.go; do
    mkdir -p $SRC/apimachinery/$(dirname $p)
    git -C kubernetes/apimachinery show v0.34.2:$p > $SRC/apimachinery/$p
  done
  d=pkg/apis/apiextensions/v1; mkdir -p $SRC/apiextensions/$d
  for f in types.go types_jsonschema.go; do
    git -C kubernetes/apiextensions-apiserver show v0.34.2:$d/$f > $SRC/apiextensions/$d/$f
  done
  scripts/gen-go-types.py $SRC > src/apiserver/api/go_types_generated.inc
"""

import os
import re
import sys

# Package key -> (files under the source root, Go package name as reflect prints it).
PACKAGES = {
    "core/v1": (["api/core/v1/types.go"], "v1"),
    "apps/v1": (["api/apps/v1/types.go"], "v1"),
    "discovery/v1": (["api/discovery/v1/types.go"], "v1"),
    "coordination/v1": (["api/coordination/v1/types.go"], "v1"),
    "events/v1": (["api/events/v1/types.go"], "v1"),
    "policy/v1": (["api/policy/v1/types.go"], "v1"),
    "rbac/v1": (["api/rbac/v1/types.go"], "v1"),
    "autoscaling/v1": (["api/autoscaling/v1/types.go"], "v1"),
    "apiextensions/v1": (["apiextensions/pkg/apis/apiextensions/v1/types.go",
                          "apiextensions/pkg/apis/apiextensions/v1/types_jsonschema.go"], "v1"),
    "meta/v1": (["apimachinery/pkg/apis/meta/v1/types.go"], "v1"),
    "intstr": (["apimachinery/pkg/util/intstr/intstr.go"], "intstr"),
    "runtime": (["apimachinery/pkg/runtime/types.go"], "runtime"),
    "resource": ([], "resource"),
    "types": ([], "types"),
}
# The API group version each package's top-level kinds are served under.
API_VERSIONS = {
    "core/v1": "v1", "apps/v1": "apps/v1", "discovery/v1": "discovery.k8s.io/v1",
    "coordination/v1": "coordination.k8s.io/v1", "events/v1": "events.k8s.io/v1",
    "policy/v1": "policy/v1", "rbac/v1": "rbac.authorization.k8s.io/v1",
    "autoscaling/v1": "autoscaling/v1", "apiextensions/v1": "apiextensions.k8s.io/v1",
}
IMPORT_PATHS = {
    "k8s.io/api/core/v1": "core/v1",
    "k8s.io/apimachinery/pkg/apis/meta/v1": "meta/v1",
    "k8s.io/apimachinery/pkg/util/intstr": "intstr",
    "k8s.io/apimachinery/pkg/api/resource": "resource",
    "k8s.io/apimachinery/pkg/runtime": "runtime",
    "k8s.io/apimachinery/pkg/types": "types",
}
# Types with their own JSON and protobuf encodings: (package, name) -> C++ Shape.
SPECIAL = {
    ("meta/v1", "Time"): "kTime",
    ("meta/v1", "MicroTime"): "kMicroTime",
    ("meta/v1", "FieldsV1"): "kFieldsV1",
    ("resource", "Quantity"): "kQuantity",
    ("intstr", "IntOrString"): "kIntOrString",
    ("runtime", "RawExtension"): "kRawJson",
    ("apiextensions/v1", "JSON"): "kRawJson",
    ("apiextensions/v1", "JSONSchemaPropsOrArray"): "kSchemaOrArray",
    ("apiextensions/v1", "JSONSchemaPropsOrBool"): "kSchemaOrBool",
    ("apiextensions/v1", "JSONSchemaPropsOrStringArray"): "kSchemaOrStringArray",
}
# The protobuf fields of the special types (apimachinery and apiextensions generated.proto).
SPECIAL_FIELDS = {
    "kTime": [(1, "seconds", "kInt64", "int64"), (2, "nanos", "kInt32", "int32")],
    "kMicroTime": [(1, "seconds", "kInt64", "int64"), (2, "nanos", "kInt32", "int32")],
    "kFieldsV1": [(1, "Raw", "kString", "[]uint8")],  # JSON text: kept as a string
    "kQuantity": [(1, "string", "kString", "string")],
    "kIntOrString": [(1, "type", "kInt64", "int64"), (2, "intVal", "kInt32", "int32"),
                     (3, "strVal", "kString", "string")],
    "kRawJson": [(1, "raw", "kString", "[]uint8")],
}
SCALARS = {"string": "kString", "bool": "kBool", "int32": "kInt32", "int64": "kInt64",
           "float64": "kDouble"}


def fail(message):
    sys.exit("gen-go-types: " + message)


class Package:
    def __init__(self, key):
        self.key = key
        self.go_name = PACKAGES[key][1]
        self.structs = {}  # name -> [(name, type expr, tag dict)]
        self.named = {}  # name -> underlying type expr
        self.imports = {}  # alias -> package key


def parse_tag(tag):
    return dict(re.findall(r'(\w+):"([^"]*)"', tag or ""))


def parse_package(root, key):
    pkg = Package(key)
    for rel in PACKAGES[key][0]:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            lines = f.read().split("\n")
        i = 0
        while i < len(lines):
            line = lines[i]
            m = re.match(r'^\s*(\w+)?\s*"([^"]+)"\s*$', line)
            if m and m.group(2) in IMPORT_PATHS:
                alias = m.group(1) or m.group(2).rsplit("/", 1)[1]
                pkg.imports[alias] = IMPORT_PATHS[m.group(2)]
            m = re.match(r"^type (\w+) struct\s*\{\s*(\})?\s*$", line)
            if m:
                fields = []
                in_comment = False
                broken = None
                i += 1
                while not m.group(2) and not lines[i].startswith("}"):
                    text = lines[i].strip()
                    i += 1
                    if text.startswith("/*"):
                        in_comment = "*/" not in text
                        continue
                    if in_comment:
                        in_comment = "*/" not in text
                        continue
                    if not text or text.startswith("//"):
                        continue
                    fm = re.match(r"^(?:(\w+)\s+)?([\w.*\[\]]+)\s*(`[^`]*`)?\s*(//.*)?$", text)
                    if not fm:
                        # Only an error if a served kind uses the struct (see message()).
                        broken = f"{rel}: cannot read field line {text!r}"
                        continue
                    fields.append((fm.group(1), fm.group(2), parse_tag(fm.group(3))))
                pkg.structs[m.group(1)] = fields if broken is None else broken
                i += 1
                continue
            m = re.match(r"^type (\w+) ([\w.*\[\]]+)\s*(//.*)?$", line)
            if m:
                pkg.named[m.group(1)] = m.group(2)
            i += 1
    return pkg


class Generator:
    def __init__(self, root):
        self.packages = {key: parse_package(root, key) for key in PACKAGES}
        self.messages = {}  # (package, name) -> C++ identifier, in definition order
        self.order = []
        self.entries = {}  # value field tuple -> entry identifier
        self.out_messages = []  # (ident, struct name, go name, shape, fields)

    def resolve(self, pkg, name):
        """(package key, name) of a possibly qualified type name used in pkg."""
        if "." in name:
            alias, local = name.split(".", 1)
            if alias not in pkg.imports:
                fail(f"{pkg.key}: unknown package alias {alias}")
            return pkg.imports[alias], local
        return pkg.key, name

    def go_name(self, pkg, expr):
        """The Go type as reflect.Type.String() prints it."""
        if expr.startswith("*"):
            return "*" + self.go_name(pkg, expr[1:])
        if expr.startswith("[]"):
            inner = self.go_name(pkg, expr[2:])
            return "[]uint8" if inner == "uint8" else "[]" + inner
        m = re.match(r"^map\[([\w.]+)\](.+)$", expr)
        if m:
            return f"map[{self.go_name(pkg, m.group(1))}]{self.go_name(pkg, m.group(2))}"
        if expr in SCALARS:
            return expr
        if expr == "byte":
            return "uint8"
        key, name = self.resolve(pkg, expr)
        return f"{PACKAGES[key][1]}.{name}"

    def describe(self, pkg, expr):
        """(kind, message ident or None, container: None|'slice'|'map', elem go name)."""
        if expr.startswith("*"):
            return self.describe(pkg, expr[1:])
        if expr == "[]byte":
            return "kBytes", None, None, None
        if expr.startswith("[]"):
            kind, message, container, _ = self.describe(pkg, expr[2:])
            if container is not None:
                fail(f"{pkg.key}: nested container {expr}")
            return kind, message, "slice", self.go_name(pkg, expr[2:])
        m = re.match(r"^map\[([\w.]+)\](.+)$", expr)
        if m:
            kind, message, container, _ = self.describe(pkg, m.group(2))
            if container is not None:
                fail(f"{pkg.key}: nested container {expr}")
            key_kind, _, _, _ = self.describe(pkg, m.group(1))
            if key_kind != "kString":
                fail(f"{pkg.key}: map key {m.group(1)} is not a string")
            return kind, self.entry(kind, message, self.go_name(pkg, m.group(2))), "map", \
                self.go_name(pkg, m.group(2))
        if expr in SCALARS:
            return SCALARS[expr], None, None, None
        key, name = self.resolve(pkg, expr)
        if key == "types" and name == "UID":
            return "kString", None, None, None
        if (key, name) in SPECIAL:
            return "kMessage", self.message(key, name), None, None
        target = self.packages[key]
        if name in target.structs:
            return "kMessage", self.message(key, name), None, None
        if name in target.named:
            kind, message, container, elem = self.describe(target, target.named[name])
            return kind, message, container, elem
        fail(f"{pkg.key}: unknown type {expr}")

    def entry(self, kind, message, value_go):
        """The map entry message {key=1, value=2} for a value type."""
        key = (kind, message, value_go)
        if key not in self.entries:
            ident = f"kEntry{len(self.entries)}"
            self.entries[key] = ident
            self.out_messages.append((ident, "MapEntry", "", "kObject", [
                (1, "key", "kString", "kAlways", None, "string", ""),
                (2, "value", kind, "kAlways", message, value_go, "")]))
        return self.entries[key]

    def message(self, key, name):
        if (key, name) in self.messages:
            return self.messages[(key, name)]
        # kCoreV1ServicePort: the house's constant naming (kCamelCase).
        ident = "k" + "".join(part[:1].upper() + part[1:] for part in key.split("/")) + name
        self.messages[(key, name)] = ident
        go = f"{PACKAGES[key][1]}.{name}"
        shape = SPECIAL.get((key, name))
        if shape is not None and shape in SPECIAL_FIELDS:
            # A raw JSON field is a pointer: absent and empty differ (null vs. a value).
            fields = [(n, j, k, "kPointer" if g == "[]uint8" else "kAlways", None, g, "")
                      for n, j, k, g in SPECIAL_FIELDS[shape]]
            self.out_messages.append((ident, name, go, shape, fields))
            return ident
        pkg = self.packages[key]
        if isinstance(pkg.structs[name], str):
            fail(pkg.structs[name])
        fields = []
        slot = len(self.out_messages)
        self.out_messages.append(None)  # keeps definition order stable under recursion
        for field_name, expr, tag in pkg.structs[name]:
            json_tag = tag.get("json", "")
            proto_tag = tag.get("protobuf", "")
            json_name, _, options = json_tag.partition(",")
            # An embedded struct is inline unless its tag names it (metav1.ObjectMeta is
            # embedded as "metadata").
            inline = (field_name is None and not json_name) or "inline" in options.split(",")
            if json_name == "-":
                continue
            number = int(proto_tag.split(",")[1]) if proto_tag else 0
            if field_name is None and not proto_tag:
                number = 0  # TypeMeta: JSON only
            if not inline and not json_name:
                json_name = field_name  # no json tag: Go uses the field name
            kind, message, container, elem = self.describe(pkg, expr)
            pointer = expr.startswith("*")
            omitempty = "omitempty" in options.split(",")
            if inline:
                mode = "kInline"
            elif container == "slice":
                mode = "kRepeated" if omitempty else "kRepeatedNull"
            elif container == "map":
                mode = "kMap" if omitempty else "kMapNull"
                kind = "kMessage"
            elif pointer:
                mode = "kPointer"
            elif kind == "kMessage" or not omitempty:
                mode = "kAlways"
            else:
                mode = "kOmitEmpty"
            go_field = self.go_name(pkg, expr.lstrip("*"))
            fields.append((number, json_name, kind, mode, message, go_field, elem or ""))
        self.out_messages[slot] = (ident, name, go, shape or "kObject", fields)
        return ident

    def kinds(self):
        out = []
        for key, api_version in API_VERSIONS.items():
            pkg = self.packages[key]
            for name, fields in pkg.structs.items():
                if isinstance(fields, str):
                    continue
                has_type_meta = any(f[0] is None and f[1] == "metav1.TypeMeta" for f in fields)
                has_meta = any(f[2].get("json", "").startswith("metadata") for f in fields)
                if has_type_meta and has_meta:
                    out.append((api_version, name, self.message(key, name)))
        return sorted(out)


def cxx_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    if len(sys.argv) != 2:
        fail("usage: gen-go-types.py SOURCE_ROOT > go_types_generated.inc")
    gen = Generator(sys.argv[1])
    kinds = gen.kinds()
    w = sys.stdout.write
    w("// Generated by scripts/gen-go-types.py from k8s.io/api, apimachinery and\n"
      "// apiextensions-apiserver v0.34.2 types.go. Do not edit; regenerate (see the script).\n"
      "// clang-format off\n\n")
    for ident, _, _, _, _ in gen.out_messages:
        w(f"extern const Message {ident};\n")
    w("\n")
    for ident, name, go, shape, fields in gen.out_messages:
        if fields:
            w(f"constexpr Field {ident}Fields[] = {{\n")
            for number, json_name, kind, mode, message, go_field, elem in fields:
                ref = "&" + message if message else "nullptr"
                w(f"    {{{number}, {cxx_string(json_name)}, {kind}, {mode}, {ref}, "
                  f"{cxx_string(go_field)}, {cxx_string(elem)}}},\n")
            w("};\n")
            w(f"constexpr Message {ident}{{{cxx_string(name)}, {cxx_string(go)}, "
              f"{ident}Fields, Shape::{shape}}};\n")
        else:
            w(f"constexpr Message {ident}{{{cxx_string(name)}, {cxx_string(go)}, {{}}, "
              f"Shape::{shape}}};\n")
    w("\nconstexpr const Message* kAllMessages[] = {\n")
    for ident, _, _, _, _ in gen.out_messages:
        w(f"    &{ident},\n")
    w("};\n")
    w("\nconstexpr KindEntry kKinds[] = {\n")
    for api_version, name, ident in kinds:
        w(f"    {{{cxx_string(api_version)}, {cxx_string(name)}, &{ident}}},\n")
    w("};\n// clang-format on\n")


if __name__ == "__main__":
    main()
