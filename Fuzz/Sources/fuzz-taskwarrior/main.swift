import FuzzSupport

FuzzMain.run(.taskwarrior)
