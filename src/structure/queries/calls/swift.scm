; Call sites for Swift: `f(x)`, `obj.f(x)`, `Type.f(x)`, `f { ... }` (a
; trailing closure is a call too). The grammar reads `!f(x)` as a call of
; `!f`, so a prefix operator may stand before the callee.
(call_expression . (simple_identifier) @name) @reference.call
(call_expression
  . (navigation_expression
      suffix: (navigation_suffix suffix: (simple_identifier) @name))) @reference.call
(call_expression
  . (prefix_expression target: (simple_identifier) @name)) @reference.call
(call_expression
  . (prefix_expression
      target: (navigation_expression
        suffix: (navigation_suffix suffix: (simple_identifier) @name)))) @reference.call
