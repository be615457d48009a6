; From tree-sitter-c 0.24 tags.scm, definitions only; also used for C++.
; @definition.function sits on the `function_declarator` (the signature);
; code widens it to the whole `function_definition` (or the prototype's
; declaration, or an enclosing template) and drops declarators found
; anywhere else, such as parameters. Specifiers without a body are mere
; uses and are skipped.

(struct_specifier
  name: (_) @name
  body: (_)) @definition.struct

(union_specifier
  name: (_) @name
  body: (_)) @definition.struct

(enum_specifier
  name: (_) @name
  body: (_)) @definition.enum

(type_definition
  declarator: (type_identifier) @name) @definition.type

(function_declarator
  declarator: (identifier) @name) @definition.function

(preproc_function_def
  name: (identifier) @name) @definition.macro

; The way up from a function declarator to its definition (see ranges.rs).

(function_definition
  declarator: (_) @wrapped) @wrapper

(declaration
  declarator: (_) @wrapped) @wrapper

(field_declaration
  declarator: (_) @wrapped) @wrapper

(pointer_declarator
  declarator: (_) @wrapped) @wrapper

(parenthesized_declarator
  (_) @wrapped) @wrapper

(attributed_declarator
  (_) @wrapped) @wrapper
