"""Tests of each lesson's own content, beside the lesson's data in lessons/lessonNN/: lesson 5's checks, numbers,
text, figures' modules and calculator, and the second-lesson fixture graded for real. (tests/lesson/ tests the lesson
model, course.lesson; tests of what every lesson must do run over every lesson, tests/lesson_cases.py.)"""
