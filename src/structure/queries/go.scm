; From tree-sitter-go 0.25 tags.scm, definitions only. Methods are named
; `Receiver.Name` (they are not nested under their type in Go); type specs
; get the specific kind of their body; top-level constants and interface
; method specs are added.

(function_declaration
  name: (identifier) @name) @definition.function

(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @qualifier
        (pointer_type (type_identifier) @qualifier)
        (generic_type type: (type_identifier) @qualifier)
        (pointer_type (generic_type type: (type_identifier) @qualifier))
      ]))
  name: (field_identifier) @name) @definition.method

(method_declaration
  name: (field_identifier) @name) @definition.method

(type_spec
  name: (type_identifier) @name
  type: (struct_type)) @definition.struct

(type_spec
  name: (type_identifier) @name
  type: (interface_type)) @definition.interface

(type_spec
  name: (type_identifier) @name) @definition.type

(type_alias
  name: (type_identifier) @name) @definition.type

(method_elem
  name: (field_identifier) @name) @definition.method

(source_file
  (const_declaration
    (const_spec
      name: (identifier) @name) @definition.constant))
