; From tree-sitter-ruby 0.23 tags.scm, definitions only. `alias` lines are
; dropped (one-line references, not definitions); constants are added.
; Scoped names keep their scope (`Admin::User`).

(method
  name: (_) @name) @definition.method

(singleton_method
  name: (_) @name) @definition.method

(class
  name: (_) @name) @definition.class

(singleton_class
  value: [(constant) (scope_resolution)] @name) @definition.class

(module
  name: (_) @name) @definition.module

(assignment
  left: (constant) @name) @definition.constant
