"""The differential oracle (spec chapter 08), in the order `fxoracle diff` runs it:
`protocol` (the plug-in contract), `sides` (what is run), `compare` (comparison and blame),
`repro` (shrunk, proved repros), `pool` (workers), `campaign` (random models, fuzzing), `diff`
(the command and its report); `plugins` holds example implementations under test."""
