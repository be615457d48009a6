; Call sites for PHP (tags.scm's @reference.call and @reference.class):
; `f()`, `\Ns\f()`, `$this->f()`, `$x?->f()`, `Cls::f()`, `new Cls()`.
(function_call_expression function: (name) @name) @reference.call
(function_call_expression function: (qualified_name (name) @name)) @reference.call
(member_call_expression name: (name) @name) @reference.call
(nullsafe_member_call_expression name: (name) @name) @reference.call
(scoped_call_expression name: (name) @name) @reference.call
(object_creation_expression (name) @name) @reference.call
(object_creation_expression (qualified_name (name) @name)) @reference.call
