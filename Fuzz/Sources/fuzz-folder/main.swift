import FuzzSupport

FuzzMain.run(.folder)
