"""Render: Course -> generated pages (Markdown and assets). Pure functions; MkDocs is not imported here."""
