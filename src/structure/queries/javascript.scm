; Definitions shared by JavaScript, TypeScript and TSX.
; From tree-sitter-javascript 0.25 tags.scm, definitions only: the @doc
; comment captures, #strip!/#select-adjacent! and every @reference.* pattern
; are dropped (they cost match time and an outline never shows them), and
; constructors are kept. Node types here exist in all three grammars.
; A `variable_declarator` range is widened in code to its declaration (and
; to an enclosing `export` statement, which also holds class decorators).

(method_definition
  name: (_) @name) @definition.method

(class
  name: (_) @name) @definition.class

(class_declaration
  name: (_) @name) @definition.class

[
  (function_expression
    name: (identifier) @name)
  (function_declaration
    name: (identifier) @name)
  (generator_function
    name: (identifier) @name)
  (generator_function_declaration
    name: (identifier) @name)
] @definition.function

(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

(variable_declarator
  name: (identifier) @name
  value: (class)) @definition.class

(assignment_expression
  left: [
    (identifier) @name
    (member_expression
      property: (property_identifier) @name)
  ]
  right: [(arrow_function) (function_expression)]) @definition.function

(pair
  key: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.function

; An exported value (`export const LIMIT = 10`, `export const api = create()`):
; part of the module's surface. Function and class values are matched above;
; value types only TypeScript has are in typescript.scm.
(export_statement
  declaration: (lexical_declaration
    (variable_declarator
      name: (identifier) @name
      value: [(number) (string) (template_string) (object) (array) (call_expression)
              (new_expression) (member_expression) (subscript_expression) (identifier)
              (true) (false) (null) (undefined) (regex) (binary_expression)
              (unary_expression) (await_expression) (parenthesized_expression)
              (ternary_expression)]) @definition.constant))

; Not definitions: what a definition's range grows to (see ranges.rs).
; @wrapper/@wrapped pairs name a node's relevant parent, and @attribute the
; decorators that may sit just before a class member, so no parent or
; sibling lookups are needed later.

(export_statement
  (_) @wrapped) @wrapper

(lexical_declaration
  . (variable_declarator) @wrapped .) @wrapper

(variable_declaration
  . (variable_declarator) @wrapped .) @wrapper

(decorator) @attribute
