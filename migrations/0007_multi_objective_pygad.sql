ALTER TABLE `results` ADD `objective_maxima` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `start_population_key` text;--> statement-breakpoint
ALTER TABLE `submissions` ADD `initial_population_key` text;--> statement-breakpoint
-- A multi-objective run's stored history was each objective's maximum over the population until
-- issue 26; it is objective_maxima now, and best_solutions_fitness is PyGAD's own history, which those
-- runs did not keep: left empty (imports always stored PyGAD's, so they keep theirs).
UPDATE `results` SET `objective_maxima` = `best_solutions_fitness`, `best_solutions_fitness` = '[]'
  WHERE `num_objectives` > 1 AND `stopped_reason` != 'imported';
