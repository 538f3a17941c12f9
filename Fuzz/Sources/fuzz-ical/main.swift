import FuzzSupport

FuzzMain.run(.ical)
