; From tree-sitter-swift 0.7 tags.scm, definitions only: one pattern per
; declaration kind (`class_declaration` holds classes, structs, enums,
; actors and extensions), protocol requirements as methods, initialisers
; named `init`; properties are left out (as fields are in other languages).

(class_declaration
  declaration_kind: "class"
  name: (type_identifier) @name) @definition.class

(class_declaration
  declaration_kind: "actor"
  name: (type_identifier) @name) @definition.class

(class_declaration
  declaration_kind: "struct"
  name: (type_identifier) @name) @definition.struct

(class_declaration
  declaration_kind: "enum"
  name: (type_identifier) @name) @definition.enum

(class_declaration
  declaration_kind: "extension"
  name: (_) @name) @definition.impl

(protocol_declaration
  name: (type_identifier) @name) @definition.interface

(function_declaration
  name: (simple_identifier) @name) @definition.function

(protocol_function_declaration
  name: (simple_identifier) @name) @definition.method

(init_declaration
  "init" @name) @definition.method

(typealias_declaration
  name: (type_identifier) @name) @definition.type
