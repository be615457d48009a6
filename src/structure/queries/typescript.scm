; TypeScript-only definitions, added to javascript.scm for TS and TSX.
; From tree-sitter-typescript 0.23 tags.scm (definitions only), plus type
; aliases, enums, namespaces and function-valued class fields, which it lacks.

(function_signature
  name: (identifier) @name) @definition.function

(method_signature
  name: (_) @name) @definition.method

(abstract_method_signature
  name: (_) @name) @definition.method

(abstract_class_declaration
  name: (type_identifier) @name) @definition.class

(module
  name: (_) @name) @definition.module

(internal_module
  name: (_) @name) @definition.module

(interface_declaration
  name: (type_identifier) @name) @definition.interface

(type_alias_declaration
  name: (type_identifier) @name) @definition.type

(enum_declaration
  name: (identifier) @name) @definition.enum

(public_field_definition
  name: (_) @name
  value: [(arrow_function) (function_expression)]) @definition.method

(export_statement
  declaration: (lexical_declaration
    (variable_declarator
      name: (identifier) @name
      value: [(as_expression) (satisfies_expression) (non_null_expression)]) @definition.constant))

(ambient_declaration
  (_) @wrapped) @wrapper
