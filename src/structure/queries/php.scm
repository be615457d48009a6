; From tree-sitter-php 0.25 tags.scm, definitions only; traits are traits,
; methods methods, and enums are added. Attributes (`#[Route]`) sit inside
; the declaration, so ranges already cover them.

(namespace_definition
  name: (namespace_name) @name) @definition.namespace

(interface_declaration
  name: (name) @name) @definition.interface

(trait_declaration
  name: (name) @name) @definition.trait

(class_declaration
  name: (name) @name) @definition.class

(enum_declaration
  name: (name) @name) @definition.enum

(function_definition
  name: (name) @name) @definition.function

(method_declaration
  name: (name) @name) @definition.method
