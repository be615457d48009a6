; A JSX element is where a component is rendered (JavaScript and TSX only: plain TypeScript has no JSX).
(jsx_opening_element name: (identifier) @name) @reference.render
(jsx_self_closing_element name: (identifier) @name) @reference.render
