"""The shipped answers of the course's exercises, one file per exercise (`e02_1.py` answers
02.1), shown by `fxoracle course check ID --solution` and checked right by the tests."""
