import FuzzSupport

FuzzMain.run(.commitPayload)
