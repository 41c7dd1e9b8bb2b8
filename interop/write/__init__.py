"""Write the native package (`package`): task.md (`frontmatter`), the files the import generates (`generated`) and
the verifier.py that runs the source's own tests (`verifier_shim`)."""
