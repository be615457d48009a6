; From tree-sitter-cpp 0.23 tags.scm, definitions only, added to c.scm.
; Out-of-class definitions keep their qualified name (`Widget::draw`).
; Classes and functions under `template <...>` are widened in code to the
; template declaration.

(function_declarator
  declarator: [(field_identifier) (destructor_name) (operator_name)] @name) @definition.function

(function_declarator
  declarator: (qualified_identifier) @name) @definition.method

(class_specifier
  name: (_) @name
  body: (_)) @definition.class

(namespace_definition
  name: (_) @name) @definition.namespace

(alias_declaration
  name: (type_identifier) @name) @definition.type

(concept_definition
  name: (identifier) @name) @definition.type

(reference_declarator
  (_) @wrapped) @wrapper

(template_declaration
  (_) @wrapped) @wrapper
