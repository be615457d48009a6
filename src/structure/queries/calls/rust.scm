; Call sites (tree-sitter-rust tags.scm's @reference.call, plus macros).
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (field_expression field: (field_identifier) @name)) @reference.call
(call_expression function: (scoped_identifier name: (identifier) @name)) @reference.call
(call_expression function: (generic_function function: (identifier) @name)) @reference.call
(macro_invocation macro: (identifier) @name) @reference.call
