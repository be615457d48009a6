; Call sites for JavaScript, TypeScript and TSX (tags.scm's @reference.call and @reference.class).
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (member_expression property: (property_identifier) @name)) @reference.call
(new_expression constructor: (identifier) @name) @reference.call
; `fn.call(this, x)` and `fn.apply(this, args)` call `fn` itself.
(call_expression
  function: (member_expression
    object: (identifier) @name
    property: (property_identifier) @_method)
  (#any-of? @_method "call" "apply")) @reference.call
