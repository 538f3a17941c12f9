import FuzzSupport

FuzzMain.run(.todoTxt)
