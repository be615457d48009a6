; tree-sitter-md ships no tags.scm. The block grammar nests a `section` per
; heading, ending before the next heading of the same or a higher level, so
; sections give real, nested ranges. Setext headings (underlined with === or
; ---) get no section of their own: code extends them to the next heading of
; the same or a higher level.

(section
  (atx_heading
    heading_content: (inline) @name)) @definition.section

(setext_heading
  heading_content: (paragraph) @name) @definition.section
