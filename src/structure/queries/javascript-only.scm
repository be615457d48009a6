; JavaScript class fields holding a function (`handle = () => {}`), which
; tags.scm misses. TypeScript names the node `public_field_definition`.

(field_definition
  property: (_) @name
  value: [(arrow_function) (function_expression)]) @definition.method
