"""The course's exercises, checked on a learner's own answer file: `fxoracle course check
CHAPTER.EXERCISE FILE` (`specs/course.md`). One module per pair of chapters holds the checks;
`solutions/` the shipped answers, shown only on request (`--solution`)."""
