; From tree-sitter-python 0.25 tags.scm, definitions only. Functions inside a
; class become methods in code.

(module
  (expression_statement
    (assignment
      left: (identifier) @name) @definition.constant))

(class_definition
  name: (identifier) @name) @definition.class

(function_definition
  name: (identifier) @name) @definition.function

; A decorated definition's range grows to include its decorators.
(decorated_definition
  definition: (_) @wrapped) @wrapper
