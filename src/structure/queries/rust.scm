; From tree-sitter-rust 0.24 tags.scm, definitions only, with kinds made
; specific (struct/enum/trait instead of class/interface), plus impl blocks
; (tags.scm has them only as references), consts and statics.
; A function in an impl or trait matches both the method and the function
; pattern; the outline keeps one symbol per node, with the more specific kind.
; Ranges are widened over leading `#[...]` attributes (@attribute below).

(struct_item
  name: (type_identifier) @name) @definition.struct

(enum_item
  name: (type_identifier) @name) @definition.enum

(union_item
  name: (type_identifier) @name) @definition.struct

(type_item
  name: (type_identifier) @name) @definition.type

(impl_item
  body: (declaration_list
    (function_item
      name: (identifier) @name) @definition.method))

(trait_item
  body: (declaration_list
    (function_item
      name: (identifier) @name) @definition.method))

(trait_item
  body: (declaration_list
    (function_signature_item
      name: (identifier) @name) @definition.method))

(function_item
  name: (identifier) @name) @definition.function

(trait_item
  name: (type_identifier) @name) @definition.trait

(impl_item
  trait: (_) @trait
  type: (_) @name) @definition.impl

(impl_item
  !trait
  type: (_) @name) @definition.impl

(mod_item
  name: (identifier) @name) @definition.module

(macro_definition
  name: (identifier) @name) @definition.macro

(const_item
  name: (identifier) @name) @definition.constant

(static_item
  name: (identifier) @name) @definition.constant

; Outer attributes (`#[test]`) just before an item join its range.
(attribute_item) @attribute
